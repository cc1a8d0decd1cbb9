/** Peer connections: IKEv2 tunnels from a device to a non-managed gateway. */
import * as z from "zod";
import { Id, IPv4, Name, Network, Timestamp } from "./common.ts";

export const IdType = z.enum(["ip", "fqdn", "email", "keyid"]);
export const DhGroup = z.enum(["modp2048", "modp3072", "modp4096", "ecp256", "ecp384", "curve25519"]);
export const CryptoAlg = z.enum(["aes-cbc", "aes-gcm"]);
export const KeySize = z.union([z.literal(128), z.literal(256)]);
export const IntegAlg = z.enum(["sha256", "sha384", "sha512"]);

const peerFields = {
  name: Name,
  idType: IdType.default("ip"),
  localId: z.string().max(255).default(""),
  remoteIdType: IdType.default("ip"),
  remoteId: z.string().max(255).default(""),
  remoteIP: IPv4,
  /** Health-check targets behind the peer: probed through the tunnel. */
  urls: z.array(z.string().max(255)).max(8).default([]),
  ips: z.array(IPv4).max(8).default([]),
  ikeDhGroup: DhGroup.default("modp2048"),
  ikeCryptoAlg: CryptoAlg.default("aes-cbc"),
  ikeKeySize: KeySize.default(256),
  ikeIntegAlg: IntegAlg.default("sha256"),
  espDhGroup: DhGroup.default("modp2048"),
  espCryptoAlg: CryptoAlg.default("aes-cbc"),
  espKeySize: KeySize.default(256),
  espIntegAlg: IntegAlg.default("sha256"),
  /** Perfect forward secrecy on CHILD_SA rekeys (6.3.1). */
  pfs: z.boolean().default(false),
  /** Phase 2 (CHILD_SA) lifetime in seconds. */
  sessionLifeTime: z
    .number()
    .int()
    .min(300)
    .max(86400 * 7)
    .default(3600),
  /** Phase 1 (IKE SA) lifetime in seconds (6.3.1). */
  ikeLifeTime: z
    .number()
    .int()
    .min(300)
    .max(86400 * 30)
    .default(86400),
  localTrafficSelectors: z.array(Network).max(16).default([]),
  remoteTrafficSelectors: z.array(Network).min(1).max(16),
};

const lifetimes = (p: { sessionLifeTime: number; ikeLifeTime: number }) => p.sessionLifeTime < p.ikeLifeTime;
const lifetimeError = { message: "sessionLifeTime must be shorter than ikeLifeTime", path: ["sessionLifeTime"] };

export const PeerCreate = z
  .object({ ...peerFields, psk: z.string().min(8, "psk must be at least 8 characters").max(255) })
  .refine(lifetimes, lifetimeError);
export type PeerCreate = z.infer<typeof PeerCreate>;

/** Body of `PUT /peers/{id}`: the whole peer; `psk` may be omitted to keep the current one. */
export const PeerUpdate = z
  .object({ ...peerFields, psk: z.string().min(8).max(255).optional() })
  .refine(lifetimes, lifetimeError);
export type PeerUpdate = z.infer<typeof PeerUpdate>;

/** A peer as returned: the PSK is never returned in clear, only whether one is set. */
export const Peer = z.object({
  id: Id,
  org: Id,
  ...peerFields,
  pskSet: z.boolean(),
  /** Number of tunnels using this peer. */
  tunnels: z.number().int().min(0),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Peer = z.infer<typeof Peer>;

/** `PUT /peers/{id}` answer: the peer and the jobs queued for the devices with a tunnel to it. */
export const PeerUpdated = Peer.extend({ jobIds: z.array(Id) });
export type PeerUpdated = z.infer<typeof PeerUpdated>;
