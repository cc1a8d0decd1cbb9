/**
 * Far ends (far-ends.ts) on the real database: a device linked to this
 * instance is live without a look-up; any other is looked up, batched, and
 * its answer kept for a while; forget() looks again.
 */
import { describe, expect, it } from "vitest";
import { insertTestDevice } from "../../test/support/devices.ts";
import { useTestServer } from "../../test/support/test-server.ts";
import { FarEnds } from "./far-ends.ts";

const t = useTestServer();

function farEnds(here: Set<string>) {
  const queued: string[] = [];
  const running: Promise<void>[] = [];
  const ends = new FarEnds(
    t.database.db,
    (key, work) => {
      queued.push(key);
      running.push(work());
    },
    (id) => here.has(id),
  );
  return { ends, queued, settle: () => Promise.all(running.splice(0)) };
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
    expect(queued).toEqual([`far:${device.id}`]);
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
    expect(queued).toHaveLength(2);
    // Within the refresh period the answer stands without a look-up.
    await setConnection(other.id, "disconnected");
    expect(ends.live(other.id)).toBe(true);
    expect(queued).toHaveLength(2);
    ends.forget(other.id);
    expect(ends.live(other.id)).toBe(false);
    await settle();
    expect(ends.live(other.id)).toBe(false);
    expect(queued).toHaveLength(3);
  });
});
