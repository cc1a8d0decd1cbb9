/**
 * Source routing per WAN (the spec's limit 6: with peer connections over
 * several WANs the source address may belong to another WAN). strongSwan
 * binds IKE and ESP to the address of the WAN a tunnel names (`local_addrs`),
 * but the kernel picks the way out by destination alone: with two default
 * routes the lower metric wins, and wan1's packets would leave through wan0
 * with wan1's address. So each WAN address gets its own table, which the
 * router's own traffic from that address uses:
 *   priority 29000+2i: from ADDR lookup main suppress_prefixlength 0
 *       (main's specific routes first: LAN, tunnels, connected subnets)
 *   priority 29001+2i: from ADDR lookup 29000+i   (default via this WAN's gateway)
 * i is the WAN's position among the WAN interfaces of the config. The agent
 * owns rule priorities 29000–29127 and tables 29000–29063 (docs/agent-network.md).
 * When a WAN loses carrier its routes must stop attracting traffic, in both
 * directions: each WAN gets `ignore_routes_with_linkdown` (the kernel skips
 * routes through it while it has no carrier, so a route via a dead WAN falls
 * through to one via a live WAN), and each WAN's table ends in a blackhole
 * default of the highest metric, so what is sent from the dead WAN's address
 * (an IKE retransmit, a DELETE) is dropped rather than sent out of another WAN
 * with a source that WAN's ISP does not route back (the spec's limit 6).
 */
import type { DeviceConfig } from "@tern/protocol";
import type { Runner } from "../../runner.ts";
import type { DesiredLinks } from "./desired.ts";
import { ROUTE_PROTO } from "./iproute.ts";

export const SOURCE_RULE_BASE = 29000;
export const SOURCE_TABLE_BASE = 29000;
export const MAX_SOURCE_WANS = 64;
/** The metric of each WAN table's blackhole default: below every real route. */
export const SOURCE_BLACKHOLE_METRIC = 4294967295;
const LINKDOWN_KEY = (wan: string) => `net/ipv4/conf/${wan}/ignore_routes_with_linkdown`;

export interface SourceRoute {
  wan: string;
  /** The WAN's address without prefix length. */
  address: string;
  gateway: string;
  table: number;
  /** The two rule priorities: main without its default, then the WAN's table. */
  priorities: [number, number];
}

/** One entry per WAN that has an address and a gateway (static or from its DHCP lease). */
export function desiredSourceRoutes(config: DeviceConfig, desired: DesiredLinks): SourceRoute[] {
  const wans = config.interfaces.filter((i) => i.type === "WAN").slice(0, MAX_SOURCE_WANS);
  const out: SourceRoute[] = [];
  wans.forEach((w, i) => {
    const cidr = desired.links.find((l) => l.name === w.name)?.addresses[0];
    const gateway = desired.routes.find((r) => r.dst === "0.0.0.0/0" && r.dev === w.name)?.gateway;
    if (!cidr || !gateway) return;
    out.push({
      wan: w.name,
      address: cidr.split("/")[0]!,
      gateway,
      table: SOURCE_TABLE_BASE + i,
      priorities: [SOURCE_RULE_BASE + 2 * i, SOURCE_RULE_BASE + 2 * i + 1],
    });
  });
  return out;
}

/** The `ip rule` lines (as `ip rule show` prints them, after "PRIO:\t") that `routes` need, by priority. */
export function sourceRules(routes: SourceRoute[]): Map<number, string[]> {
  const m = new Map<number, string[]>();
  for (const r of routes) {
    m.set(r.priorities[0], ["from", r.address, "lookup", "main", "suppress_prefixlength", "0"]);
    m.set(r.priorities[1], ["from", r.address, "lookup", String(r.table)]);
  }
  return m;
}

const RuleJson = (x: unknown) =>
  x as { priority: number; src?: string; table?: string; suppress_prefixlen?: number; srclen?: number };

/** Makes the owned rules and tables hold exactly `routes`; true when something changed. */
export async function syncSourceRoutes(runner: Runner, routes: SourceRoute[]): Promise<boolean> {
  let changed = false;
  const want = sourceRules(routes);
  const rules = (JSON.parse((await runner.run(["ip", "-j", "-4", "rule", "show"])).stdout || "[]") as unknown[]).map(RuleJson);
  const owned = rules.filter((r) => r.priority >= SOURCE_RULE_BASE && r.priority < SOURCE_RULE_BASE + 2 * MAX_SOURCE_WANS);
  const same = (have: ReturnType<typeof RuleJson>, argv: string[]) =>
    have.src === argv[1] &&
    have.table === argv[3] &&
    (argv[4] === "suppress_prefixlength" ? have.suppress_prefixlen === 0 : have.suppress_prefixlen === undefined);
  for (const have of owned) {
    const argv = want.get(have.priority);
    if (argv && same(have, argv) && owned.filter((o) => o.priority === have.priority).length === 1) continue;
    await runner.run(["ip", "-4", "rule", "del", "priority", String(have.priority)]);
    changed = true;
  }
  for (const [priority, argv] of want) {
    const have = owned.filter((o) => o.priority === priority);
    if (have.length === 1 && same(have[0]!, argv)) continue;
    await runner.run(["ip", "-4", "rule", "add", "priority", String(priority), ...argv]);
    changed = true;
  }
  // One listing of the agent's routes in every table; the owned tables are the range above.
  const listed = JSON.parse(
    (await runner.run(["ip", "-j", "-4", "route", "show", "table", "all", "proto", String(ROUTE_PROTO)])).stdout.trim() || "[]",
  ) as { type?: string; dst: string; gateway?: string; dev?: string; table?: string }[];
  const tables = new Map<number, string[]>();
  for (const r of listed) {
    const t = Number(r.table);
    if (!(t >= SOURCE_TABLE_BASE && t < SOURCE_TABLE_BASE + MAX_SOURCE_WANS)) continue;
    const key = r.type === "blackhole" ? `blackhole ${r.dst}` : `${r.dst} ${r.gateway ?? ""} ${r.dev ?? ""}`;
    tables.set(t, [...(tables.get(t) ?? []), key]);
  }
  for (const table of new Set([...tables.keys(), ...routes.map((r) => r.table)])) {
    const route = routes.find((r) => r.table === table);
    const have = (tables.get(table) ?? []).sort();
    const wanted = route ? ["blackhole default", `default ${route.gateway} ${route.wan}`] : [];
    if (have.join("|") === wanted.join("|")) continue;
    if (have.length > 0) await runner.run(["ip", "-4", "route", "flush", "table", String(table)]);
    if (route) {
      await runner.run([
        "ip",
        "-4",
        "route",
        "replace",
        "blackhole",
        "default",
        "table",
        String(table),
        "metric",
        String(SOURCE_BLACKHOLE_METRIC),
        "proto",
        String(ROUTE_PROTO),
      ]);
      await runner.run([
        "ip",
        "-4",
        "route",
        "replace",
        "default",
        "via",
        route.gateway,
        "dev",
        route.wan,
        "table",
        String(table),
        "proto",
        String(ROUTE_PROTO),
      ]);
    }
    changed = true;
  }
  for (const r of routes) {
    const key = LINKDOWN_KEY(r.wan);
    const now = await runner.run(["sysctl", "-n", key], { allowFailure: true });
    if (now.exitCode !== 0 || now.stdout.trim() === "1") continue;
    await runner.run(["sysctl", "-w", `${key}=1`]);
    changed = true;
  }
  return changed;
}
