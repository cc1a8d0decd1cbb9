import { describe, expect, it } from "vitest";
import { concernsWans, parseMonitorLine } from "../../src/kernel-events/index.ts";

// Lines as `ip -o -ts monitor link address route` (iproute2 6.1) printed them in a namespace.
const LINES = {
  carrierLost:
    "[2026-11-25T21:01:30.171402] 3: wanx@wanpeer: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group default \\    link/ether a2:66:de:9a:b6:a5 brd ff:ff:ff:ff:ff:ff",
  carrierBack:
    "3: wanx@wanpeer: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default \\    link/ether a2:66:de:9a:b6:a5 brd ff:ff:ff:ff:ff:ff",
  addrAdded:
    "[2026-11-25T21:01:30.095854] 3: wanx    inet 10.99.0.3/24 scope global wanx\\       valid_lft forever preferred_lft forever",
  addrDeleted: "Deleted 3: wanx    inet 10.99.0.3/24 scope global wanx\\       valid_lft forever preferred_lft forever",
  addr6Deleted:
    "[2026-11-25T21:01:30.171395] Deleted 2: wanpeer    inet6 fe80::fc65:aeff:feaa:85f/64 scope link tentative \\       valid_lft forever preferred_lft forever",
  policyRoute: "[2026-11-25T21:01:30.127371] default via 10.99.0.9 dev wanx table 30000 ",
  connectedDeleted: "Deleted 10.99.0.0/24 dev wanx proto kernel scope link src 10.99.0.3 linkdown ",
  localDeleted: "Deleted local 10.99.0.3 dev wanx table local proto kernel scope host src 10.99.0.3 ",
  mainDefault: "default via 10.99.0.1 dev wanx proto 57 metric 10 ",
  route6: "multicast ff00::/8 dev wanpeer table local proto kernel metric 256 pref medium",
};

describe("ip -o monitor lines", () => {
  it("parses links with their flags and operstate, carrier lost and back", () => {
    expect(parseMonitorLine(LINES.carrierLost)).toEqual({
      kind: "link",
      deleted: false,
      ifname: "wanx",
      flags: ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP", "M-DOWN"],
      state: "LOWERLAYERDOWN",
    });
    expect(parseMonitorLine(LINES.carrierBack)).toMatchObject({ kind: "link", ifname: "wanx", state: "UP" });
  });

  it("parses address additions and deletions of both families", () => {
    expect(parseMonitorLine(LINES.addrAdded)).toEqual({
      kind: "address",
      deleted: false,
      ifname: "wanx",
      family: "inet",
      cidr: "10.99.0.3/24",
    });
    expect(parseMonitorLine(LINES.addrDeleted)).toMatchObject({ kind: "address", deleted: true, cidr: "10.99.0.3/24" });
    expect(parseMonitorLine(LINES.addr6Deleted)).toMatchObject({ kind: "address", deleted: true, family: "inet6" });
  });

  it("parses routes with their device and table", () => {
    expect(parseMonitorLine(LINES.policyRoute)).toEqual({
      kind: "route",
      deleted: false,
      dst: "default",
      dev: "wanx",
      table: "30000",
    });
    expect(parseMonitorLine(LINES.connectedDeleted)).toEqual({
      kind: "route",
      deleted: true,
      dst: "10.99.0.0/24",
      dev: "wanx",
      table: null,
    });
    expect(parseMonitorLine(LINES.localDeleted)).toMatchObject({ kind: "route", dst: "10.99.0.3", table: "local" });
    expect(parseMonitorLine(LINES.route6)).toMatchObject({ kind: "route", dst: "ff00::/8", dev: "wanpeer" });
  });

  it("gives null for lines it does not know, never throws", () => {
    for (const l of ["", "   ", "Terminated", "[2026-11-25T21:01:30.1] ", "Deleted", "nsid 3 (current)"])
      expect(parseMonitorLine(l)).toBeNull();
  });

  it("keeps only links, IPv4 addresses and main-table default routes of the WANs", () => {
    const wans = new Set(["wanx"]);
    const concerns = (l: string) => concernsWans(parseMonitorLine(l)!, wans);
    expect(concerns(LINES.carrierLost)).toBe(true);
    expect(concerns(LINES.addrDeleted)).toBe(true);
    expect(concerns(LINES.connectedDeleted)).toBe(false);
    expect(concerns(LINES.mainDefault)).toBe(true);
    expect(concerns(LINES.policyRoute)).toBe(false);
    expect(concerns(LINES.localDeleted)).toBe(false);
    expect(concerns(LINES.addr6Deleted)).toBe(false);
    expect(concerns(LINES.route6)).toBe(false);
    expect(concernsWans({ kind: "resync" }, wans)).toBe(true);
  });
});
