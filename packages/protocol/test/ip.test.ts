import { describe, expect, it } from "vitest";
import { cidrsOverlap, formatIPv4, parseCidr, parseIPv4, tunnelCapacity, tunnelLoopbacks } from "../src/index.ts";

const cidr = (s: string) => {
  const c = parseCidr(s);
  if (!c) throw new Error(s);
  return c;
};

describe("IPv4 parsing", () => {
  it.each(["0.0.0.0", "255.255.255.255", "10.100.1.2"])("round-trips %s", (s) => {
    expect(formatIPv4(parseIPv4(s)!)).toBe(s);
  });
  it.each(["256.1.1.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "a.b.c.d", ""])("rejects %j", (s) => {
    expect(parseIPv4(s)).toBeNull();
  });
  it("parses networks and hosts", () => {
    expect(cidr("192.168.50.1/24")).toMatchObject({
      prefix: 24,
      network: parseIPv4("192.168.50.0"),
      broadcast: parseIPv4("192.168.50.255"),
    });
    expect(parseCidr("10.0.0.0/33")).toBeNull();
  });
  it("detects overlap", () => {
    expect(cidrsOverlap(cidr("10.0.0.0/8"), cidr("10.20.0.0/16"))).toBe(true);
    expect(cidrsOverlap(cidr("10.0.0.0/24"), cidr("10.0.1.0/24"))).toBe(false);
  });
});

/** The definitions the character-by-character parsers are built to (split and regular expressions). */
function parseIPv4Definition(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value >>> 0;
}

function parseCidrPrefixDefinition(text: string): number | null {
  const [ip, len, extra] = text.split("/");
  if (ip === undefined || len === undefined || extra !== undefined) return null;
  if (!/^(\d|[12]\d|3[0-2])$/.test(len) || parseIPv4Definition(ip) === null) return null;
  return Number(len);
}

describe("IPv4 parsing against its definition", () => {
  it.each([
    "0.0.0.0",
    "255.255.255.255",
    "1.2.3.4.",
    ".1.2.3",
    "1..2.3",
    "00.1.2.3",
    "1.2.3.04",
    "1.2.3.256",
    "1.2.3.1000",
    "1.2.3.4 ",
    " 1.2.3.4",
    "1.2.3.-4",
    "1.2.3.+4",
    "\u0661.2.3.4",
    "10.0.0.0/8",
    "10.0.0.0/08",
    "10.0.0.0/33",
    "10.0.0.0/32/1",
    "10.0.0.0/",
    "/8",
  ])("%j", (s) => {
    expect(parseIPv4(s)).toBe(parseIPv4Definition(s));
    expect(parseCidr(s)?.prefix ?? null).toBe(parseCidrPrefixDefinition(s));
  });
  it("agrees on 50,000 random near-addresses", () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = (n: number) => Math.floor(next() * n);
    const digits = (max: number) => Array.from({ length: pick(max + 1) }, () => String(pick(10))).join("");
    let validIp = 0;
    let validCidr = 0;
    for (let i = 0; i < 50_000; i++) {
      const parts = Array.from({ length: [3, 4, 4, 4, 4, 5][pick(6)]! }, () => (next() < 0.5 ? String(pick(300)) : digits(4)));
      let s = parts.join(".");
      if (next() < 0.5) s += `/${next() < 0.7 ? String(pick(40)) : digits(3)}`;
      if (next() < 0.1) {
        const at = pick(s.length + 1);
        s = s.slice(0, at) + "x./ "[pick(4)] + s.slice(at);
      }
      const want = parseIPv4Definition(s);
      const wantPrefix = parseCidrPrefixDefinition(s);
      if (want !== null) validIp++;
      if (wantPrefix !== null) validCidr++;
      expect(parseIPv4(s)).toBe(want);
      expect(parseCidr(s)?.prefix ?? null).toBe(wantPrefix);
    }
    // The strings reach every outcome, so the comparison checks something.
    expect(validIp).toBeGreaterThan(1000);
    expect(validCidr).toBeGreaterThan(1000);
  });
});

describe("tunnel loopbacks (reference layout)", () => {
  const range = cidr("10.100.0.0/16");
  it("gives the reference addresses", () => {
    expect(tunnelLoopbacks(range, 0)).toEqual(["10.100.0.2", "10.100.0.3"]);
    expect(tunnelLoopbacks(range, 1)).toEqual(["10.100.0.4", "10.100.0.5"]);
    expect(tunnelLoopbacks(range, 126)).toEqual(["10.100.0.254", "10.100.0.255"]);
    expect(tunnelLoopbacks(range, 127)).toEqual(["10.100.1.2", "10.100.1.3"]);
  });
  it("holds 32,512 tunnels in a /16 and 127 in a /24", () => {
    expect(tunnelCapacity(range)).toBe(32512);
    expect(tunnelLoopbacks(range, 32511)).toEqual(["10.100.255.254", "10.100.255.255"]);
    expect(tunnelLoopbacks(range, 32512)).toBeNull();
    expect(tunnelCapacity(cidr("10.9.9.0/24"))).toBe(127);
  });
  it("never gives two tunnels the same address", () => {
    const seen = new Set<string>();
    for (let n = 0; n < tunnelCapacity(range); n++) for (const a of tunnelLoopbacks(range, n)!) seen.add(a);
    expect(seen.size).toBe(32512 * 2);
  });
});
