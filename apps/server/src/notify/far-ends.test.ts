/**
 * Far ends (far-ends.ts) on the real database: a device linked to this
 * instance is live without a look-up; any other is looked up, batched, and
 * its answer kept for a while; forget() looks again; look-ups that come due
 * together are one task.
 */
import { describe, expect, it, vi } from "vitest";
import { insertTestDevice } from "../../test/support/devices.ts";
import { useTestServer } from "../../test/support/test-server.ts";
import { FarEnds } from "./far-ends.ts";

const t = useTestServer();

/** Far ends whose window never ends by itself (an hour): `settle` queues what is due and waits for it. */
function farEnds(here: Set<string>, windowMs = 3_600_000) {
  const queued: string[] = [];
  const running: Promise<void>[] = [];
  const ends = new FarEnds(
    t.database.db,
    (key, work) => {
      queued.push(key);
      running.push(work());
    },
    (id) => here.has(id),
    windowMs,
  );
  const settle = () => {
    ends.lookUpDue();
    return Promise.all(running.splice(0));
  };
  return { ends, queued, running, settle };
}

const setConnection = (id: string, connection: "connected" | "disconnected") =>
  t.database.db.updateTable("devices").set({ connection }).where("id", "=", id).execute();

describe("far ends", () => {
  it("a device linked here is live without a look-up, whatever the cache held", async () => {
    const device = await insertTestDevice(t);
    await setConnection(device.id, "disconnected");
    const here = new Set<string>();
    const { ends, queued, settle } = farEnds(here);
    expect(ends.live(device.id)).toBe(false);
    await settle();
    expect(queued).toEqual(["far-ends"]);
    expect(ends.live(device.id)).toBe(false);
    here.add(device.id);
    for (let i = 0; i < 3; i++) expect(ends.live(device.id, Date.now() + 10_000 * i)).toBe(true);
    expect(queued).toHaveLength(1);
  });

  it("a device linked elsewhere is looked up, kept for a while, and looked up again when forgotten", async () => {
    const [other, gone] = [await insertTestDevice(t), await insertTestDevice(t)];
    await setConnection(other.id, "connected");
    await setConnection(gone.id, "disconnected");
    const { ends, queued, settle } = farEnds(new Set());
    // Not looked up yet: not known live.
    expect(ends.live(other.id)).toBe(false);
    expect(ends.live(gone.id)).toBe(false);
    await settle();
    expect(ends.live(other.id)).toBe(true);
    expect(ends.live(gone.id)).toBe(false);
    // Both came due together: one look-up.
    expect(queued).toHaveLength(1);
    // Within the refresh period the answer stands without a look-up.
    await setConnection(other.id, "disconnected");
    expect(ends.live(other.id)).toBe(true);
    await settle();
    expect(queued).toHaveLength(1);
    ends.forget(other.id);
    expect(ends.live(other.id)).toBe(false);
    await settle();
    expect(ends.live(other.id)).toBe(false);
    expect(queued).toHaveLength(2);
    // Once the period is over, the next question looks again.
    await setConnection(gone.id, "connected");
    expect(ends.live(gone.id, Date.now() + 2_500)).toBe(false);
    await settle();
    expect(ends.live(gone.id, Date.now() + 2_500)).toBe(true);
    expect(queued).toHaveLength(3);
  });

  it("far ends that come due within the window are one look-up, queued when the window ends", async () => {
    const devices = await Promise.all([0, 1, 2, 3, 4].map(() => insertTestDevice(t)));
    for (const [i, d] of devices.entries()) await setConnection(d.id, i % 2 === 0 ? "connected" : "disconnected");
    const { ends, queued, running } = farEnds(new Set(), 50);
    for (const d of devices) expect(ends.live(d.id)).toBe(false);
    // Asked again while due: not twice.
    for (const d of devices) ends.live(d.id);
    expect(queued).toEqual([]);
    await vi.waitFor(() => expect(queued).toEqual(["far-ends"]), { timeout: 5_000 });
    await Promise.all(running.splice(0));
    expect(devices.map((d) => ends.live(d.id))).toEqual([true, false, true, false, true]);
    expect(queued).toHaveLength(1);
  });

  it("close drops the look-ups not queued yet, and a later question asks again", async () => {
    const device = await insertTestDevice(t);
    await setConnection(device.id, "connected");
    const { ends, queued, settle } = farEnds(new Set(), 20);
    expect(ends.live(device.id)).toBe(false);
    ends.close();
    await new Promise((r) => setTimeout(r, 60));
    expect(queued).toEqual([]);
    expect(ends.live(device.id)).toBe(false);
    await settle();
    expect(queued).toEqual(["far-ends"]);
    expect(ends.live(device.id)).toBe(true);
  });
});
