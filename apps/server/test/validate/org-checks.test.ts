/** Checks across an organization: LAN overlap between devices and tunnel range changes. */
import { Firewall } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { checkLanOverlap, checkTunnelRangeChange, type OverlapDevice } from "../../src/validate/index.ts";
import { edgeA, edgeB, edgeC, vrrpGroup } from "../compile/fixtures.ts";

const lan = (devId: string, name: string, IPv4: string, IPv4Mask: number, type: "LAN" | "WAN" = "LAN", isAssigned = true) => ({
  devId,
  name,
  type,
  isAssigned,
  dhcp: false,
  IPv4,
  IPv4Mask,
  gateway: "",
});
const dev = (id: string, name: string, interfaces: OverlapDevice["interfaces"], rules: unknown[] = []): OverlapDevice => ({
  id,
  name,
  interfaces,
  firewall: Firewall.parse({ rules }),
});

describe("checkLanOverlap", () => {
  const me = dev("d1", "edge-1", [
    lan("a", "lan0", "192.168.1.1", 24),
    lan("b", "lan1", "10.10.0.1", 16),
    lan("w", "wan0", "100.64.0.2", 24, "WAN"),
  ]);

  it.each([
    ["disjoint LANs", [dev("d2", "edge-2", [lan("x", "lan0", "192.168.2.1", 24)])], []],
    ["an equal LAN", [dev("d2", "edge-2", [lan("x", "eth1", "192.168.1.77", 24)])], ["interfaces.0.IPv4"]],
    ["a LAN inside mine", [dev("d2", "edge-2", [lan("x", "eth1", "10.10.5.1", 24)])], ["interfaces.1.IPv4"]],
    ["a LAN containing mine", [dev("d2", "edge-2", [lan("x", "eth1", "192.168.0.1", 16)])], ["interfaces.0.IPv4"]],
    ["the same WAN subnet is not a LAN overlap", [dev("d2", "edge-2", [lan("x", "wan0", "100.64.0.3", 24, "WAN")])], []],
    [
      "an unassigned interface of the other device",
      [dev("d2", "edge-2", [lan("x", "eth1", "192.168.1.1", 24, "LAN", false)])],
      [],
    ],
    ["the device itself in the list", [me], []],
    [
      "two devices overlapping one LAN each",
      [dev("d2", "edge-2", [lan("x", "eth1", "192.168.1.1", 25)]), dev("d3", "edge-3", [lan("y", "eth1", "10.10.200.1", 24)])],
      ["interfaces.0.IPv4", "interfaces.1.IPv4"],
    ],
  ] as const)("%s", (_n, others, paths) => {
    const problems = checkLanOverlap(me, others);
    expect(problems.map((p) => p.path)).toEqual(paths);
    for (const p of problems) expect(p.code).toBe("LAN_OVERLAPPING");
  });

  it("names the other device and interface", () => {
    const [p] = checkLanOverlap(me, [dev("d2", "edge-2", [lan("x", "eth1", "192.168.1.77", 24)])]);
    expect(p?.message).toBe("LAN subnet 192.168.1.0/24 of lan0 overlaps 192.168.1.0/24 on interface eth1 of device edge-2");
  });

  it("accepts the shared LAN of VRRP group members, but only for the grouped interfaces", () => {
    const group = vrrpGroup();
    const [a, c] = [edgeA(), edgeC()];
    expect(checkLanOverlap(a, [c], [group])).toEqual([]);
    expect(checkLanOverlap(c, [a], [group])).toEqual([]);
    expect(checkLanOverlap(a, [c]).map((p) => p.code)).toEqual(["LAN_OVERLAPPING"]);
  });

  it("refuses a translated prefix that another device publishes", () => {
    const nat = dev(
      "d1",
      "edge-1",
      [lan("a", "lan0", "192.168.1.1", 24)],
      [{ direction: "lanNat", interface: "a", source: "192.168.1.0/24", translated: "10.60.0.0/24" }],
    );
    // edge-b publishes 10.60.0.0/24 through its own NAT.
    const problems = checkLanOverlap(nat, [edgeB()]);
    expect(problems.map((p) => [p.code, p.path])).toEqual([["LAN_OVERLAPPING", "firewall.rules.0.translated"]]);
    expect(problems[0]?.message).toMatch(/published by device edge-b/);
  });
});

describe("checkTunnelRangeChange", () => {
  const devices = [edgeA(), edgeB(), edgeC()].map((d) => ({ ...d }));
  const codes = (change: Parameters<typeof checkTunnelRangeChange>[0]) =>
    checkTunnelRangeChange(change).map((p) => `${p.code} ${p.message}`);

  it("accepts a free range that holds every tunnel", () => {
    expect(checkTunnelRangeChange({ newRange: "10.250.0.0/16", devices, tunnelNums: [0, 1, 130, 32511] })).toEqual([]);
  });
  it("accepts an unchanged range without looking further", () => {
    expect(checkTunnelRangeChange({ newRange: "10.100.0.0/16", currentRange: "10.100.0.0/16", devices, tunnelNums: [] })).toEqual(
      [],
    );
  });
  it.each([
    ["not a network", "10.250.0.1/16", ["VALIDATION_FAILED must be an IPv4 network (a.b.c.d/n) with no host bits set"]],
    ["smaller than a /24", "10.250.0.0/25", ["VALIDATION_FAILED tunnelRange must be a network of /24 or larger"]],
  ])("refuses a range that is %s", (_n, newRange, expected) => {
    expect(codes({ newRange, devices, tunnelNums: [] })).toEqual(expected);
  });
  it("refuses a range too small for the tunnel numbers in use", () => {
    expect(codes({ newRange: "10.250.0.0/24", devices, tunnelNums: [1, 126, 127] })).toEqual([
      "TUNNEL_RANGE_EXHAUSTED 10.250.0.0/24 holds 127 tunnels (numbers 0-126); the organization has 3 tunnels and uses number 127",
    ]);
  });
  it("refuses a range over device subnets: LANs and LAN NAT prefixes as LAN_OVERLAPPING, WANs as validation errors", () => {
    expect(codes({ newRange: "10.0.0.0/8", devices, tunnelNums: [] })).toEqual([
      "VALIDATION_FAILED 10.0.0.0/8 overlaps 10.100.1.0/24 on WAN interface wan0 of device edge-a",
      "VALIDATION_FAILED 10.0.0.0/8 overlaps 10.101.1.0/24 on WAN interface wan1 of device edge-a",
      "LAN_OVERLAPPING 10.0.0.0/8 overlaps the LAN NAT prefix 10.50.0.0/24 of device edge-a",
      "VALIDATION_FAILED 10.0.0.0/8 overlaps 10.100.2.0/24 on WAN interface wan0 of device edge-b",
      "LAN_OVERLAPPING 10.0.0.0/8 overlaps the LAN NAT prefix 10.60.0.0/24 of device edge-b",
      "VALIDATION_FAILED 10.0.0.0/8 overlaps 10.100.3.0/24 on WAN interface wan0 of device edge-c",
    ]);
    expect(codes({ newRange: "192.168.0.0/16", devices, tunnelNums: [] })).toEqual([
      "LAN_OVERLAPPING 192.168.0.0/16 overlaps 192.168.50.0/24 on LAN interface lan0 of device edge-a",
      "LAN_OVERLAPPING 192.168.0.0/16 overlaps 192.168.60.0/24 on LAN interface lan0 of device edge-b",
      "LAN_OVERLAPPING 192.168.0.0/16 overlaps 192.168.50.0/24 on LAN interface lan0 of device edge-c",
    ]);
  });
  it("refuses while routes or BGP neighbours point at loopbacks of the current range", () => {
    // edge-b's BGP neighbour 10.200.0.4 is edge-a's tunnel loopback in 10.200.0.0/16.
    const withRoute = devices.map((d) =>
      d.name === "edge-c"
        ? { ...d, staticRoutes: [{ destination: "172.30.0.0/16", gateway: "10.200.1.8", ifname: "", metric: 0 }] }
        : d,
    );
    expect(codes({ newRange: "10.250.0.0/16", currentRange: "10.200.0.0/16", devices: withRoute, tunnelNums: [1] })).toEqual([
      "VALIDATION_FAILED device edge-b has BGP neighbor 10.200.0.4, a tunnel loopback of the current range; change that neighbor first",
      "VALIDATION_FAILED device edge-c routes 172.30.0.0/16 via tunnel loopback 10.200.1.8 of the current range; change that route first",
    ]);
  });
});
