/**
 * The lab topology file (YAML), as zod schemas. A lab is a set of nodes, each
 * one network namespace: WAN clouds (a router between the sites), edge routers
 * (run a Tern agent), LAN switches with hosts, and non-managed peers (a stock
 * strongSwan or FRR that Tern does not configure). Cross-references and the
 * address plan are checked by plan/address-plan.ts, which parseTopology runs
 * too, so every error points at a line of the file.
 */
import { Asn, CidrAddress, IfName, IPv4, Network } from "@tern/protocol";
import { z } from "zod";

/** Node names become namespace names, interface names in clouds and switches, and directory names. */
export const NodeName = z.string().regex(/^[a-z][a-z0-9-]{1,11}$/, "must be 2-12 characters [a-z0-9-], starting with a letter");

/**
 * What a cloud does to packets it sends toward one attached node (one
 * direction, like netem on the cloud's interface toward that node).
 */
export const Impairment = z
  .strictObject({
    lossPercent: z.number().min(0).max(100).default(0),
    delayMs: z.number().min(0).max(10_000).default(0),
    /** Uniform +/- around delayMs; packets are never reordered. */
    jitterMs: z.number().min(0).max(10_000).default(0),
    /** Egress rate limit in Mbit/s; null = unlimited. */
    rateMbit: z.number().positive().max(100_000).nullable().default(null),
  })
  .refine((i) => i.jitterMs <= i.delayMs, { message: "jitterMs must not exceed delayMs", path: ["jitterMs"] });
export type Impairment = z.infer<typeof Impairment>;
export const NO_IMPAIRMENT: Impairment = Object.freeze({ lossPercent: 0, delayMs: 0, jitterMs: 0, rateMbit: null });

/** A node's interface in a WAN cloud. */
export const WanAttachment = z.strictObject({
  cloud: NodeName,
  /** Interface name in the node; default wan0, wan1 … */
  name: IfName.optional(),
  /** Default: the next free subnet of the cloud's prefix, host .2. */
  address: CidrAddress.optional(),
  /** The cloud router's address on this subnet; default the first free host. */
  gateway: IPv4.optional(),
  /** Metric of the default route through this interface; default 100, 200 … in order. */
  metric: z.number().int().min(1).max(65535).optional(),
  /** Install a default route through this interface (like an ISP's DHCP would). */
  defaultRoute: z.boolean().default(true),
  /** Replaces the cloud's impairment for packets toward this node. */
  impairment: Impairment.optional(),
});
export type WanAttachment = z.infer<typeof WanAttachment>;

/** A node's interface on a LAN switch. */
export const LanAttachment = z.strictObject({
  lan: NodeName,
  /** Interface name in the node; default lan0, lan1 … */
  name: IfName.optional(),
  /** Default: the next router address of the LAN (.1, .2 …). */
  address: CidrAddress.optional(),
});
export type LanAttachment = z.infer<typeof LanAttachment>;

export const Cloud = z.strictObject({
  name: NodeName,
  /** Address space of the cloud; each attachment gets a /24 of it (a /30 when the prefix is /24 or longer). */
  prefix: Network.optional(),
  /** Default impairment of every attachment of this cloud. */
  impairment: Impairment.optional(),
});
export type Cloud = z.infer<typeof Cloud>;

export const LanHost = z.strictObject({
  name: NodeName,
  /** Static address; default the next host address (.10, .11 …) unless dhcp. */
  address: CidrAddress.optional(),
  /** No static address: the test runs a DHCP client in the host. */
  dhcp: z.boolean().default(false),
});
export type LanHost = z.infer<typeof LanHost>;

export const Lan = z.strictObject({
  name: NodeName,
  subnet: Network,
  /** Default route of the hosts (e.g. a VRRP virtual IP); default the first router's address. */
  gateway: IPv4.optional(),
  /** A count of hosts named <lan>-h1, <lan>-h2 … or a list. */
  hosts: z.union([z.number().int().min(0).max(32), z.array(LanHost).max(32)]).default(1),
});
export type Lan = z.infer<typeof Lan>;

export const Edge = z.strictObject({
  name: NodeName,
  wan: z.array(WanAttachment).min(1).max(8),
  lan: z.array(LanAttachment).max(8).default([]),
});
export type Edge = z.infer<typeof Edge>;

/** A node name of the topology or a literal IPv4 address. */
const NodeOrAddress = z.union([IPv4, NodeName]);

/** A stock strongSwan IKEv2 gateway (charon-systemd with userspace ESP), configured from these fields only. */
export const StrongswanConfig = z.strictObject({
  /** The other end: a node name (its address on a shared cloud) or an IPv4 address. */
  remote: NodeOrAddress,
  /** Default: this peer's WAN address. */
  localId: z.string().min(1).max(200).optional(),
  /** Default: the remote address. */
  remoteId: z.string().min(1).max(200).optional(),
  psk: z.string().min(8).max(200).default("tern-lab-psk-0123456789"),
  ikeProposal: z.string().default("aes256-sha256-modp2048"),
  /** ESP cipher and integrity; the DH group for PFS is added when pfs is on. */
  espProposal: z.string().default("aes256-sha256"),
  pfs: z.boolean().default(true),
  pfsGroup: z.string().default("modp2048"),
  /** Phase 1 (IKE SA) rekey time, seconds. */
  ikeLifeTime: z.number().int().min(60).max(31_536_000).default(86_400),
  /** Phase 2 (CHILD SA) rekey time, seconds. */
  childLifeTime: z.number().int().min(60).max(31_536_000).default(3_600),
  /** Default: the peer's LAN subnets, or its WAN address when it has none. */
  localTs: z.array(Network).min(1).optional(),
  remoteTs: z.array(Network).min(1).default(["0.0.0.0/0"]),
  /** none = wait for the other end (responder), start = initiate. */
  startAction: z.enum(["none", "start", "trap"]).default("none"),
});
export type StrongswanConfig = z.infer<typeof StrongswanConfig>;

export const BgpNeighbor = z.strictObject({
  address: NodeOrAddress,
  remoteAs: Asn,
  /** eBGP multihop TTL; absent = directly connected only. */
  multihop: z.number().int().min(1).max(255).optional(),
  password: z.string().min(1).max(80).optional(),
});

/** A stock FRR BGP speaker (zebra + bgpd), configured from these fields only. */
export const FrrConfig = z.strictObject({
  asn: Asn,
  /** Default: the peer's first WAN address. */
  routerId: IPv4.optional(),
  neighbors: z.array(BgpNeighbor).max(32).default([]),
  /** Prefixes to announce; default the peer's LAN subnets. */
  networks: z.array(Network).max(256).optional(),
  keepaliveSeconds: z.number().int().min(1).max(3600).default(3),
  holdSeconds: z.number().int().min(3).max(10_800).default(9),
});
export type FrrConfig = z.infer<typeof FrrConfig>;

const peerFields = {
  name: NodeName,
  wan: z.array(WanAttachment).min(1).max(8),
  lan: z.array(LanAttachment).max(8).default([]),
};
export const Peer = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("strongswan"), ...peerFields, strongswan: StrongswanConfig }),
  z.strictObject({ kind: z.literal("frr"), ...peerFields, frr: FrrConfig }),
]);
export type Peer = z.infer<typeof Peer>;

/**
 * How agents reach the management server. Default: a relay into each edge's
 * own loopback (never impaired). With `cloud`, a management node joins that
 * cloud and agents reach the server across it, impairment included.
 */
export const Control = z.strictObject({
  cloud: NodeName.optional(),
  impairment: Impairment.optional(),
});
export type Control = z.infer<typeof Control>;

export const Topology = z.strictObject({
  name: NodeName,
  description: z.string().max(2000).default(""),
  clouds: z.array(Cloud).min(1).max(64),
  edges: z.array(Edge).max(64).default([]),
  lans: z.array(Lan).max(64).default([]),
  peers: z.array(Peer).max(32).default([]),
  control: Control.default({}),
});
export type Topology = z.infer<typeof Topology>;
/** The file as written, before defaults. */
export type TopologyInput = z.input<typeof Topology>;
