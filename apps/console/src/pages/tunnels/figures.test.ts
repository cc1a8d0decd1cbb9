import type { Tunnel } from "@tern/client";
import { describe, expect, it } from "vitest";
import { filterTunnels, wanInterfaces, worstFigures } from "./figures.ts";

const side = (loss: number, rtt: number, jitter: number) => ({ loss, rtt, jitter, up: true, at: "2026-01-01T00:00:00Z" });

function tunnel(num: number, status: Tunnel["status"], a: string, b: string): Tunnel {
  return {
    num,
    status,
    id: `t${num}`,
    description: "",
    deviceA: { id: a, name: a, hostname: a },
    deviceB: { id: b, name: b, hostname: b },
  } as unknown as Tunnel;
}

describe("worstFigures", () => {
  it("takes the worse of both sides for each figure", () => {
    expect(worstFigures({ a: side(1, 40, 2), b: side(3, 20, 5) } as Tunnel["quality"])).toEqual({ loss: 3, rtt: 40, jitter: 5 });
  });
  it("uses the one side that reported", () => {
    expect(worstFigures({ a: side(0, 12, 1) } as Tunnel["quality"])).toEqual({ loss: 0, rtt: 12, jitter: 1 });
  });
  it("is null before any report", () => {
    expect(worstFigures(undefined)).toBeNull();
    expect(worstFigures({} as Tunnel["quality"])).toBeNull();
  });
});

describe("filterTunnels", () => {
  const list = [
    tunnel(3, "Connected", "paris", "lyon"),
    tunnel(1, "Pending", "paris", "nice"),
    tunnel(2, "Not Connected", "rome", "milan"),
  ];
  it("filters by status and by device name, sorted by number", () => {
    expect(filterTunnels(list, "", "all").map((t) => t.num)).toEqual([1, 2, 3]);
    expect(filterTunnels(list, "PARIS", "all").map((t) => t.num)).toEqual([1, 3]);
    expect(filterTunnels(list, "paris", "Connected").map((t) => t.num)).toEqual([3]);
    expect(filterTunnels(list, "3", "all").map((t) => t.num)).toEqual([3]);
  });
});

describe("wanInterfaces", () => {
  it("keeps the assigned WAN interfaces only", () => {
    const device = {
      interfaces: [
        { id: "1", devId: "d", name: "eth0", type: "WAN", isAssigned: true },
        { id: "2", devId: "d", name: "eth1", type: "LAN", isAssigned: true },
        { id: "3", devId: "d", name: "eth2", type: "WAN", isAssigned: false },
      ],
    };
    expect(wanInterfaces(device as never).map((i) => i.id)).toEqual(["1"]);
    expect(wanInterfaces(undefined)).toEqual([]);
  });
});
