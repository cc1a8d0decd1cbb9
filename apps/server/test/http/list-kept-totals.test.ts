/**
 * Filtered device totals kept between requests (http/kept-totals.ts): the
 * `records-total` of a filtered device list stays exact through every kind
 * of change (inserts, renames, approvals, deletions, by the API or by any
 * other writer), answers from what it kept while the devices' version stays
 * (checked by hiding a change from the version), keeps a total per filter,
 * and counts a filter on pending notifications every time.
 */
import { randomUUID } from "node:crypto";
import type { Filter } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { keptTotalsOf } from "../../src/http/kept-totals.ts";
import { insertValidDevice } from "../support/device-fixtures.ts";
import { insertTestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

describe("filtered device totals kept between requests", () => {
  const t = useTestServer();

  async function total(filter: Filter[], response: "summary" | "detailed" | "ids" = "summary", offset = 0) {
    const res = await t.api("GET", "/api/devices", {
      token: t.admin.token,
      query: { response, limit: 2, offset, filter: JSON.stringify(filter) },
    });
    expect(res.status, res.text).toBe(200);
    return Number(res.headers.get("records-total"));
  }
  /** The same filters counted by hand. */
  async function counted(where: ReturnType<typeof sql<boolean>>) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from devices d
      where d.organization_id = ${t.admin.orgId}::uuid and ${where}`.execute(t.database.db);
    return rows[0]!.n;
  }
  const nameHas = (text: string): Filter[] => [{ key: "name", op: "contains", val: text }];

  it("stays exact through inserts, renames, approvals and deletions", async () => {
    const a: Awaited<ReturnType<typeof insertValidDevice>>[] = [];
    for (let i = 0; i < 4; i++) a.push(await insertValidDevice(t, { name: `kt-a-${i}`, approved: i % 2 === 0 }));
    await insertTestDevice(t, { name: "kt-b-0" });
    const unapprovedA: Filter[] = [...nameHas("kt-a"), { key: "isApproved", op: "==", val: false }];
    const check = async () => {
      for (const response of ["summary", "detailed", "ids"] as const) {
        expect(await total(nameHas("kt-a"), response)).toBe(await counted(sql`d.name like '%kt-a%'`));
        expect(await total(unapprovedA, response)).toBe(await counted(sql`d.name like '%kt-a%' and not d.is_approved`));
      }
    };
    await check();
    expect(await total(nameHas("kt-a"))).toBe(4);
    expect(await total(unapprovedA)).toBe(2);

    await insertTestDevice(t, { name: "kt-a-new", approved: false });
    await check();
    expect(await total(unapprovedA)).toBe(3);

    const renamed = await t.api("PUT", `/api/devices/${a[0]!.id}`, { token: t.admin.token, body: { name: "kt-b-1" } });
    expect(renamed.status, renamed.text).toBeLessThan(300);
    await check();
    expect(await total(nameHas("kt-a"))).toBe(4);

    const approved = await t.api("PUT", `/api/devices/${a[1]!.id}`, { token: t.admin.token, body: { isApproved: true } });
    expect(approved.status, approved.text).toBeLessThan(300);
    await check();
    expect(await total(unapprovedA)).toBe(2);

    // Any writer, not only the API.
    await t.database.db.deleteFrom("devices").where("id", "=", a[2]!.id).execute();
    await check();
    expect(await total(nameHas("kt-a"))).toBe(3);

    // A page past the end counts on its own, kept the same way.
    expect(await total(nameHas("kt-a"), "summary", 50)).toBe(3);
    await insertTestDevice(t, { name: "kt-a-late" });
    expect(await total(nameHas("kt-a"), "summary", 50)).toBe(4);
  });

  it("answers from what it kept while the version stays, and counts again when it moved", async () => {
    const db = t.database.db;
    const d = await insertTestDevice(t, { name: "kt-hidden-0" });
    await insertTestDevice(t, { name: "kt-hidden-1" });
    expect(await total(nameHas("kt-hidden"))).toBe(2);
    // A rename the version does not see (its trigger off): the kept total is answered, so nothing counted.
    await sql`alter table devices disable trigger tern_row_updates`.execute(db);
    try {
      await db.updateTable("devices").set({ name: "kt-shown" }).where("id", "=", d.id).execute();
    } finally {
      await sql`alter table devices enable trigger tern_row_updates`.execute(db);
    }
    expect(await total(nameHas("kt-hidden"))).toBe(2);
    // Another filter was never kept: counted.
    expect(await total(nameHas("kt-hidden-"))).toBe(1);
    // Any listed column updated moves the version: counted again.
    await db.updateTable("devices").set({ hostname: "h" }).where("id", "=", d.id).execute();
    expect(await total(nameHas("kt-hidden"))).toBe(1);
  });

  it("keeps a total per filter value, and counts a filter on pending notifications every time", async () => {
    const x = await insertTestDevice(t, { name: "kt-n-0" });
    await insertTestDevice(t, { name: "kt-n-1" });
    await insertTestDevice(t, { name: "kt-m-0" });
    for (let i = 0; i < 2; i++) {
      expect(await total(nameHas("kt-n"))).toBe(2);
      expect(await total(nameHas("kt-m"))).toBe(1);
    }
    const pending: Filter[] = [...nameHas("kt-n"), { key: "pendingNotifications", op: ">", val: 0 }];
    expect(await total(pending)).toBe(0);
    // A notification changes no device, and still changes this total.
    await t.database.db
      .insertInto("notifications")
      .values({
        id: randomUUID(),
        organization_id: t.admin.orgId,
        device_id: x.id,
        event_type: "device-connection",
        title: "kt",
        details: "",
        severity: "warning",
        targets: toJson({ deviceId: x.id, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
        dedup_key: `kt:${randomUUID()}`,
      })
      .execute();
    expect(await total(pending)).toBe(1);
  });

  it("does not keep a count scoped by a long list of ids (its key would crowd out the filters')", async () => {
    const db = t.database.db;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await insertTestDevice(t, { name: `kt-ids-${i}` })).id);
    // Padded with ids of no device: about 4,800 characters of parameters, over KEPT_TOTAL_KEY_MAX.
    const scope = [...ids, ...Array.from({ length: 120 }, () => randomUUID())].join(",");
    const scoped = async () => {
      const res = await t.api("GET", "/api/devices", {
        token: t.admin.token,
        query: { response: "ids", ids: scope, filter: JSON.stringify(nameHas("kt-ids")) },
      });
      expect(res.status, res.text).toBe(200);
      return Number(res.headers.get("records-total"));
    };
    expect(await scoped()).toBe(3);
    await sql`alter table devices disable trigger tern_row_updates`.execute(db);
    try {
      await db.updateTable("devices").set({ name: "kt-other" }).where("id", "=", ids[0]!).execute();
    } finally {
      await sql`alter table devices enable trigger tern_row_updates`.execute(db);
    }
    // Counted again, though the version did not move: nothing was kept for it.
    expect(await scoped()).toBe(2);
  });

  it("keeps nothing inside a transaction (it sees its own changes, which may roll back)", async () => {
    expect(keptTotalsOf(t.database.db)).toBeDefined();
    await t.database.db.transaction().execute(async (trx) => {
      expect(keptTotalsOf(trx)).toBeUndefined();
    });
  });
});
