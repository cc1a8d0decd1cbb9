/** Small IPv4 helpers for the address plan, on top of @tern/protocol's arithmetic. */
import { type Cidr, formatIPv4, parseCidr } from "@tern/protocol";

export type { Cidr };

/** Parses a CIDR that the schema already validated. */
export function cidr(text: string): Cidr {
  const c = parseCidr(text);
  if (!c) throw new Error(`not a CIDR: ${text}`);
  return c;
}

/** "a.b.c.d/n" of the network. */
export function networkText(c: Cidr): string {
  return `${formatIPv4(c.network)}/${c.prefix}`;
}

/** The address `n` places after the network address (n = 1 is the first host). */
export function hostAt(c: Cidr, n: number): string {
  return formatIPv4((c.network + n) >>> 0);
}

/** True when `address` can be a host of the network (not its network or broadcast address, for /30 and wider). */
export function isHostOf(c: Cidr, address: number): boolean {
  if ((address & maskOf(c.prefix)) >>> 0 !== c.network) return false;
  if (c.prefix >= 31) return true;
  return address !== c.network && address !== c.broadcast;
}

export function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** The `index`-th subnet of length `len` inside `parent`, or null when it does not fit. */
export function subnetAt(parent: Cidr, len: number, index: number): Cidr | null {
  const size = 2 ** (32 - len);
  const start = parent.network + index * size;
  if (len < parent.prefix || start + size - 1 > parent.broadcast) return null;
  return cidr(`${formatIPv4(start >>> 0)}/${len}`);
}
