/**
 * Params of the remote worker VPN's actions. The spec's GET form carries them
 * as query text, so lists may be comma-separated strings and numbers strings.
 */
import { Hostname, Id, IPv4, Network, RemoteVpnUserName } from "@tern/protocol";
import { z } from "zod";

/** A list given as an array or as "a,b,c" (a query field). */
const list = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) =>
      typeof v === "string"
        ? v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : v,
    z.array(item).max(32),
  );

export const InstallParams = z.strictObject({
  /** The device that runs the VPN. */
  device: Id,
  /** Virtual IP pool handed to clients, e.g. 10.99.0.0/24 (must not overlap the device's LANs). */
  pool: Network,
  /** DNS servers pushed to clients. */
  dns: list(IPv4).default([]),
  /** The split tunnel: subnets clients reach; default every LAN subnet of the device. */
  subnets: list(Network).optional(),
});

export const DeviceParams = z.strictObject({ device: Id });

export const UpdateCertificateParams = z.strictObject({
  validityDays: z.coerce.number().int().min(1).max(825).default(365),
  /** The server identity clients check; default the current one (first time: remote-vpn.tern.invalid). */
  commonName: Hostname.max(64).optional(),
});

export const AddUserParams = z
  .strictObject({
    name: RemoteVpnUserName,
    /** EAP-MSCHAPv2 password (write-only); give it or ask for a certificate. */
    password: z.string().min(8).max(128).optional(),
    /** `certificate`: issue a certificate of the organization CA, answered once with its key. */
    auth: z.enum(["eap", "certificate"]).optional(),
  })
  .transform((p, ctx) => {
    const auth = p.auth ?? (p.password === undefined ? "certificate" : "eap");
    if (auth === "eap" && p.password === undefined)
      ctx.addIssue({ code: "custom", path: ["password"], message: "an EAP user needs a password (8-128 characters)" });
    if (auth === "certificate" && p.password !== undefined)
      ctx.addIssue({ code: "custom", path: ["password"], message: "a certificate user has no password" });
    return { name: p.name, auth, password: p.password };
  });

export const RemoveUserParams = z.strictObject({ name: RemoteVpnUserName });
