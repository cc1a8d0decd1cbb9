/**
 * Small, strict builders for nft expressions. Values come from validated
 * config, but render re-checks them so a bad value is an INVALID_CONFIG error and never
 * a half-parsed `nft -f` file.
 */
import { invalidConfig } from "../../errors.ts";

const IFNAME_OR_WILDCARD = /^[A-Za-z0-9_.-]{1,15}\*?$/;
const NETWORK = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const ADDRESS = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `"wan0"` or `{ "wan0", "wan1" }`; names may end in `*` (nft prefix match). */
export function ifnameSet(names: readonly string[], path: string): string {
  const unique = [...new Set(names)];
  if (unique.length === 0) throw invalidConfig(path, "empty interface list");
  for (const n of unique) if (!IFNAME_OR_WILDCARD.test(n)) throw invalidConfig(path, `bad interface name ${JSON.stringify(n)}`);
  const quoted = unique.map((n) => `"${n}"`);
  return quoted.length === 1 ? quoted[0]! : `{ ${quoted.join(", ")} }`;
}

/** Checks an IPv4 network in CIDR form (host bits may not be set) and returns it. */
export function network(value: string, path: string): string {
  const m = NETWORK.exec(value);
  if (!m) throw invalidConfig(path, `must be an IPv4 network, got ${JSON.stringify(value)}`);
  const octets = m.slice(1, 5).map(Number);
  const len = Number(m[5]);
  if (octets.some((o) => o > 255) || len > 32) throw invalidConfig(path, `must be an IPv4 network, got ${JSON.stringify(value)}`);
  const n = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const mask = len === 0 ? 0 : (~0 << (32 - len)) >>> 0;
  if ((n & mask) >>> 0 !== n) throw invalidConfig(path, `${value} has host bits set`);
  return value;
}

/** Prefix length of a checked network. */
export function prefixLength(value: string): number {
  return Number(value.split("/")[1]);
}

export function address(value: string, path: string): string {
  const m = ADDRESS.exec(value);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255))
    throw invalidConfig(path, `must be an IPv4 address, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * A port spec: "22", "8000-8080" or a comma list of those. Returns the nft
 * form: `22`, `8000-8080` or `{ 80, 443 }`.
 */
export function portSpec(value: string, path: string): string {
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) throw invalidConfig(path, "empty port list");
  const out = parts.map((p) => {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(p);
    if (!m) throw invalidConfig(path, `bad port ${JSON.stringify(p)} (use 22, 8000-8080 or a comma list)`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a < 1 || b > 65535 || b < a) throw invalidConfig(path, `ports must be 1-65535 and ranges ascending, got ${p}`);
    return a === b ? String(a) : `${a}-${b}`;
  });
  return out.length === 1 ? out[0]! : `{ ${out.join(", ")} }`;
}
