/** Orderings that make compiled output deterministic where order carries no meaning. */
import { parseCidr, parseIPv4 } from "@tern/protocol";

/** Compares dotted-quad addresses numerically (unparsable text sorts last, by text). */
export function compareIPv4(a: string, b: string): number {
  const x = parseIPv4(a);
  const y = parseIPv4(b);
  if (x === null || y === null) return x === null && y === null ? compareText(a, b) : x === null ? 1 : -1;
  return x - y;
}

/** Compares CIDR strings by network address, then prefix length. */
export function compareCidr(a: string, b: string): number {
  const x = parseCidr(a);
  const y = parseCidr(b);
  if (x === null || y === null) return x === null && y === null ? compareText(a, b) : x === null ? 1 : -1;
  return x.network - y.network || x.prefix - y.prefix || x.address - y.address;
}

/** Code-point order, independent of the locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A sorted copy without duplicates. */
export function sortedUnique<T>(items: readonly T[], compare: (a: T, b: T) => number): T[] {
  const sorted = [...items].sort(compare);
  return sorted.filter((item, i) => i === 0 || compare(sorted[i - 1] as T, item) !== 0);
}
