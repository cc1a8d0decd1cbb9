/**
 * Migration 20261205-301 and db/row-counts.ts: each organization's number of
 * devices, tunnels, jobs and notifications, kept by statement triggers as
 * deltas, must equal `count(*)` of its rows after single and multi-row
 * inserts, deletes, the cascades of a device's deletion, a rolled-back
 * transaction, the duty's fold and an organization's deletion; a row cannot
 * move to another organization; the migration fills the counts of rows
 * written before it.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import * as migration from "../../src/db/migrations/20261205-301-row-counts.ts";
import { type CountedTable, foldRowCounts, rowCount } from "../../src/db/row-counts.ts";
import { insertTestJob, insertTestTunnel, insertValidDevice } from "../support/device-fixtures.ts";
import { useTestServer } from "../support/test-server.ts";

const TABLES: CountedTable[] = ["devices", "tunnels", "jobs", "notifications"];

describe("row counts (migration 20261205-301)", () => {
  const t = useTestServer();

  /** Kept number and count(*) of every counted table, for each organization. */
  async function both(orgIds: string[]) {
    const out: { org: string; table: string; kept: number; counted: number }[] = [];
    for (const org of orgIds)
      for (const table of TABLES) {
        const { rows } = await sql<{ kept: number; counted: number }>`select ${rowCount(org, table)} as kept,
          (select count(*)::int from ${sql.table(table)} x where x.organization_id = ${org}::uuid) as counted`.execute(
          t.database.db,
        );
        out.push({ org, table, ...rows[0]! });
      }
    return out;
  }
  async function expectExact(orgIds: string[]) {
    const rows = await both(orgIds);
    for (const r of rows) expect(r.kept, `${r.table} of ${r.org}`).toBe(r.counted);
    return rows;
  }
  const groups = async (orgId: string) =>
    (
      await sql<{ n: number }>`select count(*)::int as n from row_counts where organization_id = ${orgId}::uuid`.execute(
        t.database.db,
      )
    ).rows[0]!.n;

  function notification(orgId: string, deviceId: string | null, i: number) {
    return {
      id: randomUUID(),
      organization_id: orgId,
      device_id: deviceId,
      event_type: "device-connection",
      title: `n ${i}`,
      details: "",
      severity: "info" as const,
      targets: toJson({ deviceId, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
      dedup_key: `rc:${randomUUID()}`,
    };
  }

  it("equals count(*) after inserts, deletes, cascades and a rollback; folds to one row a table; goes with its organization", async () => {
    const db = t.database.db;
    const a = await t.createTenant("Counts A");
    const b = await t.createTenant("Counts B");
    const orgs = [a.orgId, b.orgId];
    const devices = [];
    for (let i = 0; i < 5; i++) devices.push(await insertValidDevice(t, { orgId: i < 3 ? a.orgId : b.orgId }));
    const [a1, a2, a3, b1, b2] = devices as [
      (typeof devices)[0],
      (typeof devices)[0],
      (typeof devices)[0],
      (typeof devices)[0],
      (typeof devices)[0],
    ];
    await insertTestTunnel(t, a1, a2, { orgId: a.orgId, num: 1 });
    await insertTestTunnel(t, a2, a3, { orgId: a.orgId, num: 2 });
    await insertTestTunnel(t, b1, b2, { orgId: b.orgId, num: 1 });
    for (const d of [a1, a1, a2, b1]) await insertTestJob(t, d.id, { orgId: d === b1 ? b.orgId : a.orgId });
    // One statement for both organizations (a group per organization).
    await db
      .insertInto("notifications")
      .values([
        notification(a.orgId, a1.id, 1),
        notification(a.orgId, a3.id, 2),
        notification(a.orgId, null, 3),
        notification(b.orgId, b2.id, 4),
      ])
      .execute();
    // A repeat of an open notification (the rule engine's upsert) updates its row: no new row, nothing counted.
    const repeat = { ...notification(a.orgId, a1.id, 9), dedup_key: "rc:repeat" };
    for (let i = 0; i < 3; i++)
      await db
        .insertInto("notifications")
        .values({ ...repeat, id: randomUUID() })
        .onConflict((oc) =>
          oc
            .columns(["organization_id", "dedup_key"])
            .where("resolved", "=", sql.lit(false))
            .doUpdateSet({ count: sql`notifications.count + 1` }),
        )
        .execute();
    let rows = await expectExact(orgs);
    expect(rows.filter((r) => r.org === a.orgId).map((r) => r.kept)).toEqual([3, 2, 3, 4]);
    expect(rows.filter((r) => r.org === b.orgId).map((r) => r.kept)).toEqual([2, 1, 1, 1]);

    // Deletes: one job; then a device, whose tunnels, jobs and notifications go by cascade.
    const oneJob = await db.selectFrom("jobs").select("id").where("device_id", "=", a2.id).executeTakeFirstOrThrow();
    await db.deleteFrom("jobs").where("id", "=", oneJob.id).execute();
    await db.deleteFrom("devices").where("id", "=", a1.id).execute();
    rows = await expectExact(orgs);
    // a1's notifications (two) went with it; a3's and the one without a device stay.
    expect(rows.filter((r) => r.org === a.orgId).map((r) => r.kept)).toEqual([2, 1, 0, 2]);

    // A rolled-back transaction leaves the counts as they were; a row does not move to another organization.
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto("notifications")
          .values([notification(a.orgId, null, 5), notification(a.orgId, null, 6)])
          .execute();
        await trx.deleteFrom("tunnels").where("organization_id", "=", b.orgId).execute();
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const moved = await db
      .updateTable("notifications")
      .set({ organization_id: b.orgId })
      .where("organization_id", "=", a.orgId)
      .execute()
      .then(
        () => null,
        (err: { code?: string; message: string }) => err,
      );
    expect(moved?.code).toBe("23514");
    expect(moved?.message).toMatch(/does not move to another organization/);
    rows = await expectExact(orgs);
    expect(rows.filter((r) => r.org === a.orgId).map((r) => r.kept)).toEqual([2, 1, 0, 2]);

    // The duty's fold: one row per organization and table, the same numbers.
    expect(await groups(a.orgId)).toBeGreaterThan(TABLES.length);
    const folded = await db.transaction().execute((trx) => foldRowCounts(trx));
    expect(folded).toBeGreaterThanOrEqual(2);
    expect(await groups(a.orgId)).toBe(TABLES.length);
    expect(await groups(b.orgId)).toBe(TABLES.length);
    await expectExact(orgs);
    expect(await db.transaction().execute((trx) => foldRowCounts(trx))).toBe(0);

    // Through the API: the unfiltered lists answer the kept number, filtered ones count.
    for (const [path, total] of [
      ["/api/jobs", "0"],
      ["/api/tunnels", "1"],
      ["/api/notifications", "2"],
    ] as const) {
      const res = await t.api("GET", path, { token: a.token });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("records-total"), path).toBe(total);
    }
    const devicesPage = await t.api("GET", "/api/devices", { token: a.token, query: { response: "summary" } });
    expect(devicesPage.headers.get("records-total")).toBe("2");
    const named = await t.api("GET", "/api/devices", {
      token: a.token,
      query: { filter: JSON.stringify([{ key: "name", op: "==", val: a2.name }]) },
    });
    expect(named.headers.get("records-total")).toBe("1");

    // An organization's deletion takes its counts along; the other's stay exact.
    await db.deleteFrom("organizations").where("id", "=", b.orgId).execute();
    expect(await groups(b.orgId)).toBe(0);
    await expectExact([a.orgId]);
  });

  it("the migration counts the rows written before it", async () => {
    const db = t.database.db;
    const c = await t.createTenant("Counts C");
    const d1 = await insertValidDevice(t, { orgId: c.orgId });
    const d2 = await insertValidDevice(t, { orgId: c.orgId });
    await insertTestTunnel(t, d1, d2, { orgId: c.orgId, num: 7 });
    await migration.down(db as never);
    // Written while nothing kept count.
    await insertTestJob(t, d1.id, { orgId: c.orgId });
    await insertTestJob(t, d2.id, { orgId: c.orgId });
    await db.deleteFrom("tunnels").where("organization_id", "=", c.orgId).execute();
    await migration.up(db as never);
    const rows = await expectExact([c.orgId, t.admin.orgId]);
    expect(rows.filter((r) => r.org === c.orgId).map((r) => r.kept)).toEqual([2, 0, 2, 0]);
    // One row per organization and table that has rows.
    expect(await groups(c.orgId)).toBe(2);
  });
});
