/** Reads WAN state from `ip -j` (pure parsing + one diff), so the reaction works from the kernel's JSON, not monitor text. */
import type { WanState } from "./types.ts";

interface LinkJson {
  ifname: string;
  flags?: string[];
  operstate?: string;
}
interface AddrJson {
  ifname: string;
  addr_info?: { family?: string; local?: string; secondary?: boolean }[];
}

/** Carrier as routing sees it: up, no NO-CARRIER, and not an operstate that says the link is down. */
export function hasCarrier(l: LinkJson): boolean {
  const flags = l.flags ?? [];
  if (!flags.includes("UP") || flags.includes("NO-CARRIER")) return false;
  return !["DOWN", "LOWERLAYERDOWN", "NOTPRESENT"].includes(l.operstate ?? "UNKNOWN");
}

/** WAN states from `ip -j link show` and `ip -j -4 addr show` output; a WAN that does not exist has no carrier and no address. */
export function parseWanStates(linkJson: string, addrJson: string, wans: readonly string[]): Map<string, WanState> {
  const links = JSON.parse(linkJson || "[]") as LinkJson[];
  const addrs = JSON.parse(addrJson || "[]") as AddrJson[];
  const out = new Map<string, WanState>();
  for (const ifname of wans) {
    const l = links.find((x) => x.ifname === ifname);
    const a = addrs.find((x) => x.ifname === ifname);
    const primary = (a?.addr_info ?? []).find((i) => i.family === "inet" && i.local && !i.secondary);
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
