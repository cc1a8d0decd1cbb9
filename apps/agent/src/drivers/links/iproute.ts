/**
 * Reading iproute2's JSON (`ip -j`) into the small shapes the links driver
 * diffs against. Parsing is lenient about fields it does not need, strict
 * about the ones it does (a changed iproute2 output fails loudly, not silently).
 */
import * as z from "zod";

/**
 * The route protocol number the agent tags its routes with (`proto 57`), so it
 * only ever lists, changes and deletes its own routes. 57 is unassigned in
 * iproute2's rt_protos; a router may name it in /etc/iproute2/rt_protos.d/.
 */
export const ROUTE_PROTO = 57;

export interface ObservedAddress {
  cidr: string;
  /** Kernel-managed lifetime (a lease from a DHCP client that configures addresses itself). */
  dynamic: boolean;
}

export interface ObservedLink {
  name: string;
  ifindex: number;
  mac: string;
  mtu: number;
  /** Administratively up (`ip link set up`). */
  adminUp: boolean;
  operState: "up" | "down" | "unknown";
  linkType: string;
  addresses: ObservedAddress[];
  rxBytes: number;
  txBytes: number;
  /** The kernel's other cumulative counters (`ip -s`, as /sys/class/net/<if>/statistics); null when ip gave none. */
  counters: LinkCounters | null;
}

export interface LinkCounters {
  rxPackets: number;
  txPackets: number;
  rxErrors: number;
  txErrors: number;
  rxDrops: number;
  txDrops: number;
}

export interface ObservedRoute {
  /** Normalized: "0.0.0.0/0" for default, "/32" added to host routes. */
  dst: string;
  gateway: string | null;
  dev: string;
  metric: number;
}

const AddrInfo = z.object({
  family: z.string(),
  local: z.string().optional(),
  prefixlen: z.number().optional(),
  dynamic: z.boolean().optional(),
});

/** One direction of `stats64`; the packet, error and drop counts are read when present (older iproute2 may lack some). */
const DirectionStats = z
  .object({
    bytes: z.number(),
    packets: z.number().optional(),
    errors: z.number().optional(),
    dropped: z.number().optional(),
  })
  .loose();

const LinkJson = z.object({
  ifindex: z.number(),
  ifname: z.string(),
  flags: z.array(z.string()).default([]),
  mtu: z.number(),
  operstate: z.string().default("UNKNOWN"),
  link_type: z.string().default("none"),
  address: z.string().default(""),
  addr_info: z.array(AddrInfo).default([]),
  stats64: z.object({ rx: DirectionStats, tx: DirectionStats }).loose().optional(),
});

const RouteJson = z.object({
  dst: z.string(),
  gateway: z.string().optional(),
  dev: z.string().optional(),
  metric: z.number().optional(),
});

function parseJsonArray(text: string, what: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  const value: unknown = JSON.parse(trimmed);
  if (!Array.isArray(value)) throw new Error(`${what}: expected a JSON array from ip -j`);
  return value;
}

function operState(text: string): ObservedLink["operState"] {
  if (text === "UP") return "up";
  if (text === "DOWN" || text === "LOWERLAYERDOWN" || text === "NOTPRESENT" || text === "DORMANT") return "down";
  return "unknown";
}

/** Parses `ip -j -s addr show`. */
export function parseAddrShow(text: string): ObservedLink[] {
  return parseJsonArray(text, "ip addr show").map((raw) => {
    const l = LinkJson.parse(raw);
    return {
      name: l.ifname,
      ifindex: l.ifindex,
      mac: l.address,
      mtu: l.mtu,
      adminUp: l.flags.includes("UP"),
      operState: operState(l.operstate),
      linkType: l.link_type,
      addresses: l.addr_info
        .filter((a) => a.family === "inet" && a.local !== undefined && a.prefixlen !== undefined)
        .map((a) => ({ cidr: `${a.local}/${a.prefixlen}`, dynamic: a.dynamic === true })),
      rxBytes: l.stats64?.rx.bytes ?? 0,
      txBytes: l.stats64?.tx.bytes ?? 0,
      counters: linkCounters(l.stats64),
    };
  });
}

function linkCounters(stats: z.infer<typeof LinkJson>["stats64"]): LinkCounters | null {
  const { rx, tx } = stats ?? {};
  if (rx?.packets === undefined || tx?.packets === undefined) return null;
  return {
    rxPackets: rx.packets,
    txPackets: tx.packets,
    rxErrors: rx.errors ?? 0,
    txErrors: tx.errors ?? 0,
    rxDrops: rx.dropped ?? 0,
    txDrops: tx.dropped ?? 0,
  };
}

/** "default" → "0.0.0.0/0", "10.1.2.3" → "10.1.2.3/32"; anything else as is. */
export function normalizeDst(dst: string): string {
  if (dst === "default") return "0.0.0.0/0";
  return dst.includes("/") ? dst : `${dst}/32`;
}

/** How a destination is written in commands: ip's own spelling, so recorded commands read naturally. */
export function commandDst(dst: string): string {
  return dst === "0.0.0.0/0" ? "default" : dst;
}

/** Parses `ip -j route show …` (IPv4 unicast routes; entries without a device are skipped). */
export function parseRoutes(text: string): ObservedRoute[] {
  const out: ObservedRoute[] = [];
  for (const raw of parseJsonArray(text, "ip route show")) {
    const r = RouteJson.parse(raw);
    if (r.dev === undefined) continue;
    out.push({ dst: normalizeDst(r.dst), gateway: r.gateway ?? null, dev: r.dev, metric: r.metric ?? 0 });
  }
  return out;
}
