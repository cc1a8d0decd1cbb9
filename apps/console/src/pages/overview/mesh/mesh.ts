/**
 * The tunnel mesh as a graph: devices (and peers) are nodes, tunnels are
 * edges. A fleet of thousands cannot be drawn legibly (nor laid out without
 * stalling the page), so at most `maxNodes` devices are kept: those with a
 * tunnel that is not Connected first (what an admin must look at), then
 * offline devices, then the most connected ones (given every tunnel; given
 * the chosen devices, in their list's order); the rest is counted in
 * `hidden`. Nor is every tunnel read for it: `chooseDevices` picks the
 * devices from the fleet's troubled tunnels alone, and only the tunnels of
 * those devices are read (see ../mesh-data.ts).
 */
import type { DeviceSummary, TunnelSummary } from "@tern/client";

export type NodeState = "online" | "offline" | "pending" | "peer";
export type EdgeStatus = TunnelSummary["status"];

export interface MeshNode {
  id: string;
  name: string;
  state: NodeState;
  /** Number of tunnels of the node among those given (all of a chosen device's: not only those drawn). */
  degree: number;
}

export interface MeshEdge {
  id: string;
  num: number;
  source: string;
  target: string;
  status: EdgeStatus;
  label: string;
}

export interface Mesh {
  nodes: MeshNode[];
  edges: MeshEdge[];
  /** Devices (and peers) left out by the cap. */
  hidden: number;
  /** Tunnels left out because one of their ends is. */
  hiddenEdges: number;
  totalNodes: number;
}

export const MAX_NODES = 300;

export const nodeState = (d: Pick<DeviceSummary, "isApproved" | "isConnected">): NodeState =>
  !d.isApproved ? "pending" : d.isConnected ? "online" : "offline";

const peerId = (id: string) => `peer:${id}`;

/** Problems first (a tunnel not Connected), then offline or pending, then the most tunnels; by name for equal ones. */
function rank(nodes: MeshNode[], troubled: Set<string>): MeshNode[] {
  const trouble = (n: MeshNode) => (troubled.has(n.id) ? 0 : 1);
  const down = (n: MeshNode) => (n.state === "offline" || n.state === "pending" ? 0 : 1);
  return [...nodes].sort(
    (a, b) => trouble(a) - trouble(b) || down(a) - down(b) || b.degree - a.degree || a.name.localeCompare(b.name),
  );
}

/** What the whole fleet holds, when `buildMesh` is given only part of it (the chosen devices and their tunnels). */
export interface FleetTotals {
  devices: number;
  tunnels: number;
}

/**
 * The devices worth drawing, at most `max`, without the fleet's tunnels: the
 * ends of troubled tunnels (a tunnel not Connected and not N/A) first, then
 * offline and pending devices, then the others in the list's order. One pass
 * over the list, no sort: it runs over 10,000 devices within a frame.
 */
export function chooseDevices(devices: DeviceSummary[], troubled: TunnelSummary[], max = MAX_NODES): DeviceSummary[] {
  if (devices.length <= max) return devices;
  const troubledIds = new Set<string>();
  for (const t of troubled) {
    if (t.status === "Connected" || t.status === "N/A") continue;
    troubledIds.add(t.deviceA.id);
    if (t.deviceB) troubledIds.add(t.deviceB.id);
  }
  const first: DeviceSummary[] = [];
  const down: DeviceSummary[] = [];
  const rest: DeviceSummary[] = [];
  for (const d of devices) {
    if (troubledIds.has(d.id)) first.push(d);
    else if (nodeState(d) !== "online") {
      if (first.length + down.length < max) down.push(d);
    } else if (first.length + down.length + rest.length < max) rest.push(d);
  }
  return [...first, ...down, ...rest].slice(0, max);
}

export function buildMesh(devices: DeviceSummary[], tunnels: TunnelSummary[], maxNodes = MAX_NODES, totals?: FleetTotals): Mesh {
  const nodes = new Map<string, MeshNode>();
  for (const d of devices) nodes.set(d.id, { id: d.id, name: d.name, state: nodeState(d), degree: 0 });
  const edges: MeshEdge[] = [];
  const troubled = new Set<string>();
  for (const t of tunnels) {
    const target = t.deviceB ? t.deviceB.id : t.peer ? peerId(t.peer.id) : null;
    const a = nodes.get(t.deviceA.id);
    if (a && t.peer && target && !nodes.has(target))
      nodes.set(target, { id: target, name: t.peer.name, state: "peer", degree: 0 });
    const b = target ? nodes.get(target) : undefined;
    // Every tunnel read counts for its ends, also one to a device not given (the chosen devices' degrees stay whole).
    if (a) a.degree++;
    if (b) b.degree++;
    if (!a || !b || !target) continue;
    if (t.status !== "Connected" && t.status !== "N/A") {
      troubled.add(t.deviceA.id);
      troubled.add(target);
    }
    edges.push({
      id: t.id,
      num: t.num,
      source: t.deviceA.id,
      target,
      status: t.status,
      label: `#${t.num} ${t.deviceA.name} – ${t.deviceB?.name ?? t.peer?.name ?? "peer"}`,
    });
  }
  const all = [...nodes.values()];
  const kept = all.length > maxNodes ? rank(all, troubled).slice(0, maxNodes) : all;
  const keptIds = new Set(kept.map((n) => n.id));
  const keptEdges = edges.filter((e) => keptIds.has(e.source) && keptIds.has(e.target));
  // Given part of the fleet: the rest of it is hidden too (peers are counted among the nodes read).
  const peers = all.length - devices.length;
  const totalNodes = totals ? Math.max(totals.devices + peers, all.length) : all.length;
  const totalEdges = totals ? Math.max(totals.tunnels, edges.length) : edges.length;
  return {
    nodes: kept,
    edges: keptEdges,
    hidden: totalNodes - kept.length,
    hiddenEdges: totalEdges - keptEdges.length,
    totalNodes,
  };
}

/** A key that changes only when the drawn nodes or edges change (not their states): the layout is re-run only then. */
export function topologyKey(mesh: Mesh): string {
  return `${mesh.nodes.map((n) => n.id).join(",")}|${mesh.edges.map((e) => `${e.source}>${e.target}`).join(",")}`;
}
