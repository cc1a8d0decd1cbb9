/**
 * Migration 20261207-401: `device_disconnects` holds exactly the disconnected
 * devices with their link's end, kept by a trigger on `devices` whatever
 * writes the connection (a link's end, the reaper, a hello, a restore that
 * inserts rows). The device-connection alerts' check reads it instead of
 * every device's row (its alerts: test/notify/engine.test.ts).
 */
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import * as migration from "../../src/db/migrations/20261207-401-device-disconnects.ts";
import { insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

describe("migration 20261207-401: device_disconnects", () => {
  const t = useTestServer();

  /** The marker rows against what `devices` says, for these devices. */
  async function markers(ids: string[]) {
    const db = t.database.db;
    const kept = await db
      .selectFrom("device_disconnects")
      .select(["device_id", "disconnected_at"])
      .where("device_id", "in", ids)
      .orderBy("device_id")
      .execute();
    const expected = await db
      .selectFrom("devices")
      .select(["id as device_id", "disconnected_at"])
      .where("id", "in", ids)
      .where("connection", "=", "disconnected")
      .where("disconnected_at", "is not", null)
      .orderBy("id")
      .execute();
    return { kept, expected };
  }

  const setConnection = (ids: string[], connection: "connected" | "disconnected", at: Date | null) =>
    t.database.db.updateTable("devices").set({ connection, disconnected_at: at }).where("id", "in", ids).execute();

  it("holds exactly the disconnected devices through connects, disconnects, renames and deletes", async () => {
    const devices = await Promise.all([0, 1, 2].map(() => insertValidDevice(t)));
    const ids = devices.map((d) => d.id);
    expect((await markers(ids)).kept).toEqual([]);

    const ended = new Date(Date.now() - 120_000);
    await setConnection(ids, "disconnected", ended);
    let m = await markers(ids);
    expect(m.kept).toHaveLength(3);
    expect(m.kept).toEqual(m.expected);

    // One comes back; another's link ends again later; a rename changes nothing.
    await setConnection([ids[0]!], "connected", null);
    const later = new Date();
    await t.database.db.updateTable("devices").set({ disconnected_at: later }).where("id", "=", ids[1]!).execute();
    await t.database.db.updateTable("devices").set({ name: "renamed" }).where("id", "=", ids[2]!).execute();
    m = await markers(ids);
    expect(m.kept.map((r) => r.device_id)).toEqual([ids[1], ids[2]].sort());
    expect(m.kept).toEqual(m.expected);
    expect(m.kept.find((r) => r.device_id === ids[1])!.disconnected_at).toEqual(later);

    // A deleted device takes its row along.
    await t.database.db.deleteFrom("devices").where("id", "=", ids[2]!).execute();
    expect((await markers(ids)).kept.map((r) => r.device_id)).toEqual([ids[1]]);

    // A device inserted already disconnected (a restore) is held too.
    const restored = await insertValidDevice(t);
    await t.database.db.transaction().execute(async (trx) => {
      await sql`create temporary table restored on commit drop as select * from devices where id = ${restored.id}`.execute(trx);
      await trx.deleteFrom("devices").where("id", "=", restored.id).execute();
      await sql`update restored set connection = 'disconnected', disconnected_at = ${ended}`.execute(trx);
      await sql`insert into devices select * from restored`.execute(trx);
    });
    m = await markers([restored.id]);
    expect(m.kept).toHaveLength(1);
    expect(m.kept).toEqual(m.expected);
  });

  it("fills the table from the devices already disconnected, and down takes it away", async () => {
    const device = await insertValidDevice(t);
    await migration.down(t.database.db as never);
    const ended = new Date(Date.now() - 60_000);
    await setConnection([device.id], "disconnected", ended);
    await migration.up(t.database.db as never);
    const m = await markers([device.id]);
    expect(m.kept).toEqual([{ device_id: device.id, disconnected_at: ended }]);
    await setConnection([device.id], "connected", null);
    expect((await markers([device.id])).kept).toEqual([]);
  });
});
