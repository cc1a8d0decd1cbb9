/**
 * The remote worker VPN application (app store): what a device that runs it
 * gets in its desired config, and the params of the application's actions.
 * IKEv2 remote access with strongSwan: a virtual IP pool, DNS servers, split
 * tunnel to chosen LAN subnets, EAP-MSCHAPv2 users and/or users with
 * certificates of the organization CA.
 */
import * as z from "zod";
import { IPv4, Network } from "./common.ts";

/** A remote user's name: the EAP identity or the certificate's common name. */
export const RemoteVpnUserName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "letters, digits and . _ @ - (up to 64), starting with a letter or digit");

/** One EAP-MSCHAPv2 user with the password in clear (the desired config is sealed at rest as a whole). */
export const ConfigRemoteVpnEapUser = z.object({ name: RemoteVpnUserName, password: z.string().min(1) });
export type ConfigRemoteVpnEapUser = z.infer<typeof ConfigRemoteVpnEapUser>;

/** The `remoteVpn` section of a device's desired config: absent when the device does not run the application. */
export const ConfigRemoteVpn = z.object({
  /** IKE identity of the router (an FQDN in the server certificate's subject alternative name). */
  serverId: z.string().min(1),
  /** Virtual IPs handed to clients; routed into the VPN by the agent. */
  pool: Network,
  dns: z.array(IPv4),
  /** The split tunnel: the only subnets clients reach through the VPN. */
  subnets: z.array(Network).min(1),
  /** PEM: the server certificate (issued by the organization CA), its private key (PKCS#8) and the CA. */
  serverCertificate: z.string(),
  serverKey: z.string(),
  caCertificate: z.string(),
  /** PEM CRL of the CA: certificates of removed users (null before the first one was issued). */
  crl: z.string().nullable(),
  eapUsers: z.array(ConfigRemoteVpnEapUser),
  /** Accept clients with a certificate of the organization CA (certificate users). */
  certificateUsers: z.boolean(),
});
export type ConfigRemoteVpn = z.infer<typeof ConfigRemoteVpn>;
