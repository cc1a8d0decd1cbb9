/**
 * IPv4 arithmetic shared by server validation and agent rendering.
 * Pure functions on 32-bit unsigned integers; no dependency.
 */

/**
 * Parses dotted-quad IPv4 into an unsigned 32-bit integer, or null: four
 * octets of one to three digits, no leading zero, each at most 255. Read
 * character by character (no split, no regular expression): statuses, zod
 * checks and every compile call it, and the parts a split makes were garbage
 * at each call.
 */
export function parseIPv4(text: string): number | null {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || dots === 3) return null;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      // A leading zero is an octet of its own ("0"), never the start of a longer one ("01").
      if ((digits === 1 && octet === 0) || digits === 3) return null;
      octet = octet * 10 + (c - 48);
      digits++;
      if (octet > 255) return null;
    } else return null;
  }
  if (dots !== 3 || digits === 0) return null;
  return (value * 256 + octet) >>> 0;
}

/** Formats an unsigned 32-bit integer as dotted-quad IPv4. */
export function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}

/** The netmask of a prefix length as an unsigned integer. */
export function prefixMask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

export interface Cidr {
  /** The address as written (host bits may be set). */
  address: number;
  prefix: number;
  /** The network address (host bits cleared). */
  network: number;
  /** The last address of the network. */
  broadcast: number;
}

/** Parses "a.b.c.d/n" (host bits allowed) or null: a prefix length of 0 to 32 written without a leading zero. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf("/");
  if (slash < 0) return null;
  const len = text.slice(slash + 1);
  if (!/^(\d|[12]\d|3[0-2])$/.test(len)) return null;
  const address = parseIPv4(text.slice(0, slash));
  if (address === null) return null;
  const prefix = Number(len);
  const mask = prefixMask(prefix);
  const network = (address & mask) >>> 0;
  return { address, prefix, network, broadcast: (network | ~mask) >>> 0 };
}

/** Formats the network of a CIDR ("10.0.0.0/24"). */
export function formatNetwork(cidr: Cidr): string {
  return `${formatIPv4(cidr.network)}/${cidr.prefix}`;
}

/** True when the address lies inside the CIDR's network. */
export function cidrContains(cidr: Cidr, address: number): boolean {
  return (address & prefixMask(cidr.prefix)) >>> 0 === cidr.network;
}

/** True when two networks share at least one address. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.network <= b.broadcast && b.network <= a.broadcast;
}

/** Number of tunnels whose /31 loopback pairs fit in a tunnel range. */
export function tunnelCapacity(range: Cidr): number {
  const blocks = Math.floor(2 ** (32 - range.prefix) / 256);
  return blocks * 127;
}

/**
 * The /31 loopback pair of tunnel `num` inside an organization's tunnel range,
 * following the reference layout: h = (num % 127 + 1) * 2, l = floor(num / 127),
 * ends at range + l*256 + h and h + 1. Returns null when `num` does not fit.
 */
export function tunnelLoopbacks(range: Cidr, num: number): [string, string] | null {
  if (!Number.isInteger(num) || num < 0 || num >= tunnelCapacity(range)) return null;
  const h = ((num % 127) + 1) * 2;
  const l = Math.floor(num / 127);
  const a = (range.network + l * 256 + h) >>> 0;
  return [formatIPv4(a), formatIPv4(a + 1)];
}
