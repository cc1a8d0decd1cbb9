/** Where each tunnel's IKE and ESP leave from when its WAN fails (local-wan.ts). */
import { describe, expect, it } from "vitest";
import { localEnds } from "../../src/drivers/ikev2/local-wan.ts";
import type { WanState } from "../../src/kernel-events/types.ts";
import { tunnel } from "../support/configs.ts";

const state = (ifname: string, carrier: boolean, address: string | null): [string, WanState] => [
  ifname,
  { ifname, carrier, address },
];
const WANS = ["wan0", "wan1", "wan2"];
const peerOnWan1 = tunnel({
  id: "p1",
  kind: "peer",
  localInterface: "wan1",
  remoteAddress: "198.51.100.7",
  localLoopback: "10.100.0.0",
  remoteLoopback: "10.100.0.1",
});
const deviceOnWan1 = tunnel({ id: "d1", localInterface: "wan1", localLoopback: "10.100.0.2", remoteLoopback: "10.100.0.3" });
const up = new Map([state("wan0", true, "100.64.1.2"), state("wan1", true, "100.65.1.2"), state("wan2", true, "100.66.1.2")]);

describe("local end of a tunnel (limit 6, failover)", () => {
  it("leaves from its own WAN's address while that WAN is up", () => {
    const ends = localEnds([peerOnWan1, deviceOnWan1], WANS, up);
    expect(ends.get("p1")).toEqual({ ifname: "wan1", address: "100.65.1.2", failedOver: false });
    expect(ends.get("d1")).toEqual({ ifname: "wan1", address: "100.65.1.2", failedOver: false });
  });

  it("a peer connection whose WAN lost carrier moves to the first other WAN that is up, with that WAN's address; a device tunnel stays", () => {
    const down = new Map([...up, state("wan0", false, "100.64.1.2"), state("wan1", false, "100.65.1.2")]);
    const ends = localEnds([peerOnWan1, deviceOnWan1], WANS, down);
    expect(ends.get("p1")).toEqual({ ifname: "wan2", address: "100.66.1.2", failedOver: true });
    expect(ends.get("d1")).toEqual({ ifname: "wan1", address: "100.65.1.2", failedOver: false });
    // Its WAN's address removed: the same move.
    const noAddress = new Map([...up, state("wan1", true, null)]);
    expect(localEnds([peerOnWan1], WANS, noAddress).get("p1")).toEqual({
      ifname: "wan0",
      address: "100.64.1.2",
      failedOver: true,
    });
  });

  it("skips a WAN that already carries a tunnel to the same peer, and stays (or waits) when no WAN is left", () => {
    const samePeerOnWan0 = { ...peerOnWan1, id: "p0", localInterface: "wan0" };
    const wan1Down = new Map([...up, state("wan1", false, "100.65.1.2")]);
    expect(localEnds([peerOnWan1, samePeerOnWan0], WANS, wan1Down).get("p1")?.ifname).toBe("wan2");
    expect(localEnds([peerOnWan1, samePeerOnWan0], ["wan0", "wan1"], wan1Down).get("p1")).toEqual({
      ifname: "wan1",
      address: "100.65.1.2",
      failedOver: false,
    });
    const allDown = new Map([state("wan0", false, "100.64.1.2"), state("wan1", false, null)]);
    expect(localEnds([peerOnWan1], ["wan0", "wan1"], allDown).has("p1")).toBe(false);
  });
});
