/** What the agent learns from the kernel about links, addresses and routes (`ip monitor`). */

/** One change the kernel announced, as `ip -o monitor link address route` prints it. */
export type KernelEvent =
  | { kind: "link"; deleted: boolean; ifname: string; flags: string[]; state: string | null }
  | { kind: "address"; deleted: boolean; ifname: string; family: "inet" | "inet6"; cidr: string }
  | { kind: "route"; deleted: boolean; dst: string; dev: string | null; table: string | null }
  /** The monitor (re)started: events may have been missed, read the whole state again. */
  | { kind: "resync" };

/** A WAN interface as the kernel has it now. */
export interface WanState {
  ifname: string;
  /** The device exists, is administratively up and has carrier (no NO-CARRIER flag, not operstate DOWN/LOWERLAYERDOWN). */
  carrier: boolean;
  /** Its primary IPv4 address (no prefix), null when it has none. */
  address: string | null;
}

/** A WAN whose carrier or address changed; `before` is null for the first reading. */
export interface WanChange {
  ifname: string;
  before: WanState | null;
  after: WanState;
  /** Monotonic time (performance.now()) the first event of the batch arrived. */
  seenAt: number;
}

/** One line for logs and notifications, e.g. "wan0 carrier lost" or "wan0 address 10.0.0.2 → 10.0.0.9". */
export function describeWanChange(c: WanChange): string {
  const parts: string[] = [];
  const b = c.before;
  const a = c.after;
  if (!b)
    return `${c.ifname} ${a.carrier ? "has carrier" : "has no carrier"}, ${a.address ? `address ${a.address}` : "no address"}`;
  if (b.carrier !== a.carrier) parts.push(a.carrier ? "carrier up" : "carrier lost");
  if (b.address !== a.address)
    parts.push(
      a.address === null
        ? `address ${b.address} removed`
        : b.address
          ? `address ${b.address} → ${a.address}`
          : `address ${a.address} added`,
    );
  return `${c.ifname} ${parts.join(", ")}`;
}
