/**
 * Interface counters for statistics history: `ip -j -s addr show` of
 * iproute2 6.x carries packets, errors and drops beside the bytes; the agent
 * reports them (optional protocol fields), and they agree with the kernel's
 * own /sys/class/net/<if>/statistics on this machine.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { InterfaceState } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { parseAddrShow } from "../../src/drivers/links/iproute.ts";

const FULL =
  '[{"ifindex":2,"ifname":"eth0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"operstate":"UP","link_type":"ether","address":"52:54:00:12:34:56","addr_info":[],"stats64":{"rx":{"bytes":123456789012,"packets":98765,"errors":3,"dropped":7,"over_errors":0,"multicast":12},"tx":{"bytes":5555,"packets":44,"errors":1,"dropped":2,"carrier_errors":0,"collisions":0}}}]';

describe("interface counters", () => {
  it("reads packets, errors and drops of both directions from ip -j -s", () => {
    const [link] = parseAddrShow(FULL);
    expect(link?.rxBytes).toBe(123456789012);
    expect(link?.counters).toEqual({ rxPackets: 98765, txPackets: 44, rxErrors: 3, txErrors: 1, rxDrops: 7, txDrops: 2 });
  });

  it("an ip without packet counts gives none (the status then omits them), not zeros", () => {
    const [link] = parseAddrShow('[{"ifindex":1,"ifname":"x","mtu":1500,"stats64":{"rx":{"bytes":1},"tx":{"bytes":2}}}]');
    expect(link?.counters).toBeNull();
  });

  it("old and new interface states both parse: the counters are optional", () => {
    const base = {
      devId: "eth0",
      name: "eth0",
      operState: "up",
      IPv4: "",
      IPv4Mask: null,
      gateway: "",
      mac: "",
      mtu: 1500,
      rxBytes: 1,
      txBytes: 2,
      publicIp: "",
      publicPort: null,
      lte: null,
    };
    expect(InterfaceState.safeParse(base).success).toBe(true);
    expect(InterfaceState.parse({ ...base, rxPackets: 5, txDrops: 1 })).toMatchObject({ rxPackets: 5, txDrops: 1 });
    expect(InterfaceState.safeParse({ ...base, rxErrors: -1 }).success).toBe(false);
  });

  it("agrees with /sys/class/net/lo/statistics on this machine", () => {
    const before = Number(readFileSync("/sys/class/net/lo/statistics/rx_packets", "utf8"));
    const [lo] = parseAddrShow(execFileSync("ip", ["-j", "-s", "addr", "show", "dev", "lo"], { encoding: "utf8" }));
    const after = Number(readFileSync("/sys/class/net/lo/statistics/rx_packets", "utf8"));
    expect(lo?.counters).not.toBeNull();
    expect(lo!.counters!.rxPackets).toBeGreaterThanOrEqual(before);
    expect(lo!.counters!.rxPackets).toBeLessThanOrEqual(after);
    expect(lo!.counters!.rxErrors).toBe(Number(readFileSync("/sys/class/net/lo/statistics/rx_errors", "utf8")));
  });
});
