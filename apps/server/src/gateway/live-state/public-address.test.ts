import { describe, expect, it } from "vitest";
import type { DeviceConnection } from "../connection.ts";
import { initialHistory, PublicAddressTracker } from "./public-address.ts";

/** A tracker whose database work is only recorded (the link's serial queue), and a link with two WAN interfaces. */
function setup(limits = { maxChanges: 2, windowMs: 1_000 }) {
  const scheduled: string[] = [];
  const tracker = new PublicAddressTracker(
    { metrics: { publicAddressChanges: { inc: () => undefined } } } as never,
    { emit: () => undefined } as never,
    limits,
  );
  const link = () =>
    ({
      publicAddresses: initialHistory(
        [
          { devId: "wan0", PublicIP: "198.51.100.1", PublicPort: "4500", isPublicAddressRateLimited: false },
          { devId: "wan1", PublicIP: "", PublicPort: "", isPublicAddressRateLimited: false },
        ] as never,
        undefined,
      ),
      serial: (what: string) => {
        scheduled.push(what);
        return Promise.resolve();
      },
    }) as unknown as DeviceConnection;
  const report = (conn: DeviceConnection, publicIp: string, now: number) =>
    tracker.observe(conn, [{ devId: "wan0", publicIp, publicPort: 4500 } as never], now);
  return { link, report, scheduled };
}

describe("public address history", () => {
  it("makes no array for a status whose address did not change", () => {
    const { link, report, scheduled } = setup();
    const conn = link();
    const before = conn.publicAddresses.wan0!.changes;
    expect(before).toEqual([]);
    for (let t = 0; t < 5_000; t += 500) report(conn, "198.51.100.1", t);
    expect(conn.publicAddresses.wan0!.changes).toBe(before);
    expect(scheduled).toEqual([]);
  });

  it("counts changes inside the window, limits beyond it, and forgets them once the window has passed", () => {
    const { link, report, scheduled } = setup();
    const conn = link();
    const other = link();
    const h = conn.publicAddresses.wan0!;
    report(conn, "203.0.113.1", 1_000);
    report(conn, "203.0.113.2", 1_100);
    expect(h.changes).toEqual([1_000, 1_100]);
    expect(h.limited).toBe(false);
    report(conn, "203.0.113.3", 1_200);
    expect(h.limited).toBe(true);
    expect(scheduled).toEqual(["public address", "public address", "public address"]);
    // Another link's histories (and this link's other interface) share nothing with this one.
    expect(other.publicAddresses.wan0!.changes).toEqual([]);
    expect(conn.publicAddresses.wan1!.changes).toEqual([]);
    // 1,000 and 1,100 leave the window: two changes in it, within the limit again, the address is applied.
    report(conn, "203.0.113.3", 2_150);
    expect(h.changes).toEqual([1_200]);
    expect(h.limited).toBe(false);
    expect(scheduled).toHaveLength(4);
    // All gone: the history is as empty as a new one, and a later change starts counting afresh.
    report(conn, "203.0.113.3", 5_000);
    expect(h.changes).toEqual([]);
    report(conn, "203.0.113.4", 5_100);
    expect(h.changes).toEqual([5_100]);
    expect(other.publicAddresses.wan0!.changes).toEqual([]);
  });
});
