/**
 * Reads WAN state from one `ip -j addr show` (every link with its flags,
 * operstate and addresses; pure parsing + one diff), so the reaction works
 * from the kernel's JSON, not from monitor text.
 */
import type { WanState } from "./types.ts";

interface LinkJson {
  ifname: string;
  flags?: string[];
  operstate?: string;
  addr_info?: { family?: string; local?: string; secondary?: boolean }[];
}

/** Carrier as routing sees it: up, no NO-CARRIER, and not an operstate that says the link is down. */
export function hasCarrier(l: Pick<LinkJson, "flags" | "operstate">): boolean {
  const flags = l.flags ?? [];
  if (!flags.includes("UP") || flags.includes("NO-CARRIER")) return false;
  return !["DOWN", "LOWERLAYERDOWN", "NOTPRESENT"].includes(l.operstate ?? "UNKNOWN");
}

/** WAN states from `ip -j addr show` output (not `-4`: it leaves out links without IPv4); a WAN that does not exist has no carrier and no address. */
export function parseWanStates(addrJson: string, wans: readonly string[]): Map<string, WanState> {
  const links = JSON.parse(addrJson || "[]") as LinkJson[];
  const out = new Map<string, WanState>();
  for (const ifname of wans) {
    const l = links.find((x) => x.ifname === ifname);
    const primary = (l?.addr_info ?? []).find((i) => i.family === "inet" && i.local && !i.secondary);
    out.set(ifname, { ifname, carrier: l ? hasCarrier(l) : false, address: primary?.local ?? null });
  }
  return out;
}

/** The WANs whose carrier or address differ between two readings (a WAN new in `next` counts as changed). */
export function changedWans(prev: ReadonlyMap<string, WanState>, next: ReadonlyMap<string, WanState>): WanState[] {
  const out: WanState[] = [];
  for (const [ifname, n] of next) {
    const p = prev.get(ifname);
    if (!p || p.carrier !== n.carrier || p.address !== n.address) out.push(n);
  }
  return out;
}
