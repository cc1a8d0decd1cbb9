/**
 * Migration 20261206-201 and db/row-counts.ts `rowVersion`: the version of an
 * organization's devices grows with every statement that inserts or deletes
 * its devices or updates a column a device list filters on, in that
 * statement's transaction (a rollback leaves it as it was), not with other
 * updates; the duty's fold keeps it; the trigger's columns cover every
 * column a device list key reads.
 */
import { type RawBuilder, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { DEVICE_LIST_COLUMNS } from "../../src/db/migrations/20261206-201-list-versions.ts";
import { foldRowCounts, foldRowUpdates, rowVersion } from "../../src/db/row-counts.ts";
import type { Db } from "../../src/db/schema.ts";
import { DEVICE_LIST } from "../../src/services/devices/devices.ts";
import { insertTestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

describe("device list versions (migration 20261206-201)", () => {
  const t = useTestServer();
  const version = async (db: Db = t.database.db, orgId = t.admin.orgId) =>
    BigInt((await sql<{ v: string }>`select ${rowVersion(orgId, "devices")}::text as v`.execute(db)).rows[0]!.v);

  it("grows by one with each statement that inserts, deletes or updates a listed column, not with other updates", async () => {
    const db = t.database.db;
    const v0 = await version();
    const a = await insertTestDevice(t, { name: "ver-a" });
    const b = await insertTestDevice(t, { name: "ver-b" });
    const v1 = await version();
    expect(v1).toBe(v0 + 2n);

    await db.updateTable("devices").set({ name: "ver-a2" }).where("id", "=", a.id).execute();
    expect(await version()).toBe(v1 + 1n);
    // Two rows in one statement: one change.
    await db.updateTable("devices").set({ is_approved: false }).where("id", "in", [a.id, b.id]).execute();
    expect(await version()).toBe(v1 + 2n);
    // Not a column a list reads: no change.
    await db.updateTable("devices").set({ last_seen_at: new Date() }).where("id", "=", a.id).execute();
    await db.updateTable("devices").set({ sync_attempts: 3 }).where("id", "=", a.id).execute();
    expect(await version()).toBe(v1 + 2n);

    await db.deleteFrom("devices").where("id", "=", b.id).execute();
    expect(await version()).toBe(v1 + 3n);
  });

  it("counts a change in its own transaction: a rollback leaves the version as it was", async () => {
    const db = t.database.db;
    const d = await insertTestDevice(t, { name: "ver-rollback" });
    const before = await version();
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.updateTable("devices").set({ name: "ver-rolled" }).where("id", "=", d.id).execute();
        // The transaction sees its own change; nobody else does.
        expect(await version(trx)).toBe(before + 1n);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await version()).toBe(before);
  });

  it("keeps the version through the duty's fold, which leaves one row per organization and table", async () => {
    const db = t.database.db;
    for (let i = 0; i < 3; i++) {
      const d = await insertTestDevice(t, { name: `ver-fold-${i}` });
      await db
        .updateTable("devices")
        .set({ hostname: `h-${i}` })
        .where("id", "=", d.id)
        .execute();
    }
    const before = await version();
    const updatesBefore = await db.selectFrom("row_updates").select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow();
    expect(updatesBefore.n).toBeGreaterThan(1);
    await db.transaction().execute(async (trx) => {
      await foldRowUpdates(trx);
      await foldRowCounts(trx);
    });
    expect(await version()).toBe(before);
    const updates = await db.selectFrom("row_updates").select(["resource", "changes"]).execute();
    expect(updates.map((u) => u.resource)).toEqual(["devices"]);
    const counts = await db
      .selectFrom("row_counts")
      .select(sql<number>`count(*)::int`.as("n"))
      .where("organization_id", "=", t.admin.orgId)
      .where("resource", "=", "devices")
      .executeTakeFirstOrThrow();
    expect(counts.n).toBe(1);
    // Changes after the fold still count.
    await insertTestDevice(t, { name: "ver-after-fold" });
    expect(await version()).toBe(before + 1n);
  });

  it("updates columns on every key a device list filters on and keeps its total for", async () => {
    const db = t.database.db;
    const { rows } = await sql<{ name: string }>`select a.attname as name from pg_trigger g
      join pg_attribute a on a.attrelid = g.tgrelid and a.attnum = any(g.tgattr::int2[])
      where g.tgname = 'tern_row_updates' and g.tgrelid = 'devices'::regclass`.execute(db);
    const covered = new Set(rows.map((r) => r.name));
    expect([...covered].sort()).toEqual([...DEVICE_LIST_COLUMNS].sort());

    const columnsOf = (expr: string | RawBuilder<unknown>) => {
      const text = typeof expr === "string" ? expr : sql`${expr}`.compile(db).sql;
      return [...text.matchAll(/\bd\.(\w+)/g)].map((m) => m[1]!);
    };
    for (const [key, field] of Object.entries(DEVICE_LIST.fields)) {
      if (field.keepsTotal === false) continue;
      const read = [
        ...(Array.isArray(field.column) ? field.column : [field.column]).flatMap(columnsOf),
        ...(field.elements ? columnsOf(field.elements) : []),
      ];
      expect(read.length, `${key} reads a device column`).toBeGreaterThan(0);
      for (const column of read) expect(covered.has(column), `${key}: ${column} is in the trigger`).toBe(true);
    }
  });
});
