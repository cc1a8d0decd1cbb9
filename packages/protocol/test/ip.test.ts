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
