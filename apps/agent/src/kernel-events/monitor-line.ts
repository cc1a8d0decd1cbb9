/**
 * Parses one line of `ip -o monitor link address route` (iproute2 6.1 prints
 * text there even with -j, one event per line with -o; `-ts` prefixes a
 * timestamp). Only what the agent acts on is extracted; anything else is
 * null, never an error: a line format we do not know must not stop the watch.
 */
import type { KernelEvent } from "./types.ts";

const TIMESTAMP = /^\[[^\]]*\]\s*/;
// "3: wan0@peer: <NO-CARRIER,BROADCAST,UP> mtu 1500 … state LOWERLAYERDOWN …"
const LINK = /^\d+:\s+([^\s:@]+)(?:@[^\s:]+)?:\s+<([^>]*)>(?:.*?\bstate (\S+))?/;
// "3: wan0    inet 10.99.0.3/24 scope global wan0\ …"
const ADDRESS = /^\d+:\s+(\S+)\s+(inet6?)\s+(\S+)/;

export function parseMonitorLine(raw: string): KernelEvent | null {
  let line = raw.replace(TIMESTAMP, "").trim();
  if (line === "") return null;
  const deleted = line.startsWith("Deleted ");
  if (deleted) line = line.slice("Deleted ".length);
  const link = LINK.exec(line);
  if (link)
    return { kind: "link", deleted, ifname: link[1]!, flags: link[2]!.split(",").filter(Boolean), state: link[3] ?? null };
  const addr = ADDRESS.exec(line);
  if (addr) return { kind: "address", deleted, ifname: addr[1]!, family: addr[2] as "inet" | "inet6", cidr: addr[3]! };
  // Routes: "[type] dst [via gw] dev X [table T] …"; the destination is the first word that is not a route type.
  const words = line.split(/\s+/);
  const types = new Set([
    "unicast",
    "local",
    "broadcast",
    "multicast",
    "blackhole",
    "unreachable",
    "prohibit",
    "throw",
    "anycast",
    "nat",
  ]);
  const dst = types.has(words[0]!) ? words[1] : words[0];
  if (!dst || !/^(default|[\d.]+(\/\d+)?|[0-9a-f:]+(\/\d+)?)$/i.test(dst)) return null;
  const after = (key: string) => {
    const i = words.indexOf(key);
    return i >= 0 ? (words[i + 1] ?? null) : null;
  };
  return { kind: "route", deleted, dst, dev: after("dev"), table: after("table") };
}

/**
 * Whether an event can change what the agent knows about `wans`: their links,
 * IPv4 addresses, and default routes through them (a gateway appearing or
 * going). Other routes (a BGP table churning over a WAN, the agent's own
 * policy tables, the local table) would only cost reads.
 */
export function concernsWans(e: KernelEvent, wans: ReadonlySet<string>): boolean {
  switch (e.kind) {
    case "resync":
      return true;
    case "link":
      return wans.has(e.ifname);
    case "address":
      return e.family === "inet" && wans.has(e.ifname);
    case "route":
      return e.dst === "default" && e.dev !== null && wans.has(e.dev) && (e.table === null || e.table === "main");
  }
}
