/** The resolved lab: every namespace, link, address, route and impaired link, computed from a topology. */
import type { FrrConfig, Impairment, StrongswanConfig } from "../topology/schema.ts";

export type NodeKind = "cloud" | "edge" | "peer" | "switch" | "host" | "mgmt";

export interface PlanNode {
  name: string;
  kind: NodeKind;
  /** Routes packets between its interfaces (net.ipv4.ip_forward=1). */
  forwarding: boolean;
}

/** One side of a veth pair. */
export interface LinkEnd {
  node: string;
  ifname: string;
}

export interface PlanLink {
  a: LinkEnd;
  b: LinkEnd;
}

export interface PlanAddress {
  node: string;
  ifname: string;
  /** Address with prefix length, e.g. 100.64.1.2/24. */
  cidr: string;
}

export interface PlanRoute {
  node: string;
  /** "default" or a network. */
  dst: string;
  via: string;
  dev: string;
  metric?: number;
}

export interface PlanBridge {
  node: string;
  ifname: string;
  ports: string[];
}

/** A node's interface in a cloud: the unit of impairment (`<cloud>:<node>`). */
export interface PlanAttachment {
  id: string;
  cloud: string;
  node: string;
  /** The cloud router's interface toward the node; impairment is applied on its egress. */
  cloudIf: string;
  nodeIf: string;
  subnet: string;
  /** The cloud router's address (plain IPv4): the node's gateway. */
  gateway: string;
  /** The node's address with prefix length. */
  address: string;
  /** NFQUEUE number used when delay is emulated with nfq-netem; unique in the lab. */
  queue: number;
  impairment: Impairment;
}

export interface PlanLanAttachment {
  lan: string;
  node: string;
  nodeIf: string;
  /** The switch port (named after the node). */
  portIf: string;
  address: string | null;
}

export interface PlanStrongswanPeer {
  kind: "strongswan";
  node: string;
  localAddress: string;
  remoteAddress: string;
  config: StrongswanConfig & { localId: string; remoteId: string; localTs: string[] };
  /** Remote traffic selectors routed into ipsec0 once charon runs (0.0.0.0/0 never is). */
  routedRemoteTs: string[];
  /** Source address for those routes (the peer's first LAN address), if any. */
  routeSource: string | null;
}

export interface PlanFrrPeer {
  kind: "frr";
  node: string;
  config: FrrConfig & { routerId: string; networks: string[] };
  /** Neighbor addresses resolved from node names. */
  neighbors: { address: string; remoteAs: number; multihop?: number; password?: string }[];
}

export type PlanPeer = PlanStrongswanPeer | PlanFrrPeer;

export type PlanControl = { via: "local" } | { via: "cloud"; cloud: string; node: string; address: string };

export interface LabPlan {
  name: string;
  nodes: PlanNode[];
  links: PlanLink[];
  bridges: PlanBridge[];
  addresses: PlanAddress[];
  routes: PlanRoute[];
  attachments: PlanAttachment[];
  lanAttachments: PlanLanAttachment[];
  peers: PlanPeer[];
  control: PlanControl;
  /** Edge names, in file order: one agent each. */
  edges: string[];
}

/** A planning problem, located by its path in the topology file. */
export interface PlanIssue {
  path: (string | number)[];
  message: string;
}
