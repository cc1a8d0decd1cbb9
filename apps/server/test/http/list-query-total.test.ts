/**
 * runList counts on its own (and only when the page does not tell the total)
 * instead of riding a `count(*) over ()` on the page query. Same answers as
 * before: every query below runs through runList and through the previous
 * algorithm (kept here as `previousRunList`), on the devices, jobs,
 * notifications and tunnels lists with their real specs, and must give the
 * same rows, in the same order, with the same totals.
 */
import { randomUUID } from "node:crypto";
import type { Filter } from "@tern/protocol";
import { type Kysely, type SelectQueryBuilder, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { toJson } from "../../src/db/json.ts";
import { rowCount } from "../../src/db/row-counts.ts";
import type { Database } from "../../src/db/schema.ts";
import { filterCondition, type ListQuery, type ListSpec, runList } from "../../src/http/list-query.ts";
import { DEVICE_LIST, pendingNotificationsSql } from "../../src/services/devices/devices.ts";
import { JOB_LIST } from "../../src/services/jobs/jobs.ts";
import { NOTIFICATION_LIST } from "../../src/services/notifications/notifications.ts";
import { TUNNEL_LIST } from "../../src/services/tunnels/query.ts";
import { insertTestJob, insertTestTunnel } from "../support/device-fixtures.ts";
import { insertTestDevice, type TestDevice } from "../support/devices.ts";
import { useTestServer } from "../support/test-server.ts";

/** runList as it was before issue 14: the total as a window over the filtered rows on the page query. */
async function previousRunList<DB, TB extends keyof DB, O>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<DB, TB, O>,
  list: ListQuery,
  spec: ListSpec,
): Promise<{ rows: O[]; total: number }> {
  let filtered = query;
  list.filter.forEach((f, i) => {
    filtered = filtered.where(filterCondition(f, spec, i));
  });
  const sortKey = list.sort ?? spec.defaultSort.key;
  const sortField = spec.fields[sortKey]!;
  const order = list.sort ? list.order : spec.defaultSort.order;
  const column = Array.isArray(sortField.column) ? sortField.column[0]! : sortField.column;
  const ref = typeof column === "string" ? sql.ref(column) : column;
  const page = filtered
    .orderBy(sql`${ref} ${sql.raw(order === "desc" ? "desc nulls last" : "asc nulls first")}`)
    .orderBy(sql`${sql.ref(spec.tiebreaker)} ${sql.raw(order === "desc" ? "desc" : "asc")}`)
    .limit(list.limit)
    .offset(list.offset);
  const rows = (await page.select(sql<number>`count(*) over ()`.as("__total")).execute()) as (O & { __total?: number })[];
  if (rows.length === 0 && list.offset > 0) {
    const counted = await sql<{
      total: number;
    }>`select count(*)::int as total from (${filtered.clearSelect().select(sql`1`.as("one"))}) as filtered`.execute(db);
    return { rows: [], total: Number(counted.rows[0]?.total ?? 0) };
  }
  const total = Number(rows[0]?.__total ?? 0);
  for (const row of rows) delete row.__total;
  return { rows, total };
}

const t = useTestServer();
const DEVICES = 60;
const devices: TestDevice[] = [];

beforeAll(async () => {
  for (let i = 0; i < DEVICES; i++) {
    // Repeated names: the tiebreaker decides the order within them.
    devices.push(await insertTestDevice(t, { name: `edge-${String(i % 17).padStart(2, "0")}`, approved: i % 4 !== 0 }));
  }
  const db = t.database.db;
  for (const [i, d] of devices.entries()) {
    if (i % 3 === 0)
      await db
        .updateTable("devices")
        .set({ hostname: `host-${i % 5}`, connection: "connected" })
        .where("id", "=", d.id)
        .execute();
  }
  const base = Date.parse("2026-01-01T00:00:00Z");
  for (let i = 0; i < 90; i++) {
    // Groups of equal created_at.
    await insertTestJob(t, devices[i % DEVICES]!.id, {
      state: i % 3 === 0 ? "complete" : "queued",
      createdAt: new Date(base + Math.floor(i / 4) * 1000),
    });
  }
  for (let i = 0; i < 70; i++) {
    const deviceId = devices[i % 23]!.id;
    await db
      .insertInto("notifications")
      .values({
        id: randomUUID(),
        organization_id: t.admin.orgId,
        device_id: deviceId,
        event_type: "device-connection",
        title: `Notification ${i % 9}`,
        details: "",
        severity: (["info", "warning", "critical"] as const)[i % 3]!,
        targets: toJson({ deviceId, tunnelId: null, interfaceId: null, vrrpGroupId: null }),
        dedup_key: `test:${i}`,
        is_read: i % 2 === 0,
        resolved: i % 5 === 0,
        last_seen_at: new Date(base + Math.floor(i / 3) * 1000),
      })
      .execute();
  }
  for (let i = 0; i < 40; i++) await insertTestTunnel(t, devices[i]!, devices[(i + 1) % DEVICES]!, { num: 100 + i });
});

const f = (key: string, op: Filter["op"], val: Filter["val"]): Filter => ({ key, op, val });
const pages = [
  { offset: 0, limit: 7 },
  { offset: 5, limit: 25 },
  { offset: 0, limit: 1000 },
  { offset: 0, limit: 0 },
  { offset: 57, limit: 10 },
  { offset: 500, limit: 10 },
];

function queries(sorts: (string | undefined)[], filters: Filter[][]): ListQuery[] {
  const out: ListQuery[] = [];
  for (const sort of sorts)
    for (const order of ["asc", "desc"] as const)
      for (const filter of filters) for (const page of pages) out.push({ ...page, sort, order, filter });
  return out;
}

async function expectSame<O>(
  build: () => SelectQueryBuilder<Database, never, O>,
  spec: ListSpec,
  list: ListQuery,
  count?: Parameters<typeof runList>[4],
) {
  const db = t.database.db;
  const { rows, total } = await runList(db, build(), list, spec, count);
  const after = { rows, total };
  if (list.limit === 0) {
    // The one deliberate change: `limit=0` had no row to carry the window's total and answered 0; now the count.
    const whole = await previousRunList(db, build(), { ...list, offset: 0, limit: 1000 }, spec);
    expect({ list, ...after }).toEqual({ list, rows: [], total: whole.total });
    return;
  }
  const before = await previousRunList(db, build(), list, spec);
  expect({ list, ...after }).toEqual({ list, ...before });
}

describe("runList: same rows, order and totals as the window-count version", () => {
  it("devices (summary select list, pending-notification sub-query, jsonb element filters)", async () => {
    const build = () =>
      t.database.db
        .selectFrom("devices as d")
        .where("d.organization_id", "=", t.admin.orgId)
        .select(["d.id", "d.name", "d.hostname", "d.interfaces", pendingNotificationsSql.as("pending_notifications")]);
    const list = queries(
      [undefined, "name", "hostname", "pendingNotifications", "isConnected"],
      [
        [],
        [f("name", "contains", "1")],
        [f("isApproved", "==", true), f("interfaces.name", "==", "wan0")],
        [f("name", "==", "none")],
      ],
    );
    expect(list.length).toBeGreaterThan(200);
    for (const q of list) await expectSame(build as never, DEVICE_LIST, q);
    // The kept number of devices (db/row-counts.ts) as the total of the unfiltered queries: the same totals.
    for (const q of list) await expectSame(build as never, DEVICE_LIST, q, { total: rowCount(t.admin.orgId, "devices") });
  });

  it("jobs (joined device columns, equal creation times)", async () => {
    const build = () =>
      t.database.db
        .selectFrom("jobs as j")
        .innerJoin("devices as d", "d.id", "j.device_id")
        .select(["j.id", "j.state", "j.created_at", "d.name as device_name"])
        .where("j.organization_id", "=", t.admin.orgId);
    for (const q of queries([undefined, "createdAt", "device.name", "state"], [[], [f("state", "==", "queued")]])) {
      await expectSame(build as never, JOB_LIST, q);
      // As listJobs counts: the kept number without filters, else the jobs alone (no join) with the filters.
      const jobsAlone = t.database.db.selectFrom("jobs as j").where("j.organization_id", "=", t.admin.orgId);
      await expectSame(build as never, JOB_LIST, q, { total: rowCount(t.admin.orgId, "jobs"), from: jobsAlone as never });
    }
  });

  it("notifications (computed sort keys)", async () => {
    const build = () =>
      t.database.db.selectFrom("notifications as n").selectAll("n").where("n.organization_id", "=", t.admin.orgId);
    for (const q of queries([undefined, "lastSeenAt", "severity", "title"], [[], [f("resolved", "==", false)]])) {
      await expectSame(build as never, NOTIFICATION_LIST, q);
      await expectSame(build as never, NOTIFICATION_LIST, q, { total: rowCount(t.admin.orgId, "notifications") });
    }
  });

  it("tunnels (the page of ids on the tunnels table)", async () => {
    const build = () =>
      t.database.db
        .selectFrom(sql`(select * from tunnels t where t.organization_id = ${t.admin.orgId}::uuid)`.as("f"))
        .select(sql<string>`f.id`.as("id"));
    for (const q of queries([undefined, "num", "createdAt"], [[], [f("device.id", "==", devices[3]!.id)]])) {
      await expectSame(build as never, TUNNEL_LIST, q);
      await expectSame(build as never, TUNNEL_LIST, q, { total: rowCount(t.admin.orgId, "tunnels") });
    }
  });

  it("keyset paging (after=cursor) walks the same rows in the same order as offset, with the same totals", async () => {
    const db = t.database.db;
    const cases: [() => SelectQueryBuilder<Database, never, { id: string }>, ListSpec, (string | undefined)[], Filter[][]][] = [
      [
        () =>
          t.database.db
            .selectFrom("devices as d")
            .where("d.organization_id", "=", t.admin.orgId)
            .select(["d.id", pendingNotificationsSql.as("pending_notifications")]) as never,
        DEVICE_LIST,
        [undefined, "name", "hostname", "pendingNotifications", "isConnected", "lastConnectedAt"],
        [[], [f("name", "contains", "1")]],
      ],
      [
        () =>
          t.database.db
            .selectFrom("jobs as j")
            .leftJoin("devices as d", "d.id", "j.device_id")
            .select(["j.id"])
            .where("j.organization_id", "=", t.admin.orgId) as never,
        JOB_LIST,
        [undefined, "device.name", "finishedAt"],
        [[], [f("state", "==", "queued")]],
      ],
      [
        () =>
          t.database.db.selectFrom("notifications as n").select("n.id").where("n.organization_id", "=", t.admin.orgId) as never,
        NOTIFICATION_LIST,
        [undefined, "severity", "resolvedAt"],
        [[]],
      ],
      [
        () =>
          t.database.db
            .selectFrom(sql`(select * from tunnels t where t.organization_id = ${t.admin.orgId}::uuid)`.as("f"))
            .select(sql<string>`f.id`.as("id")) as never,
        TUNNEL_LIST,
        [undefined, "createdAt"],
        [[]],
      ],
    ];
    let walked = 0;
    for (const [build, spec, sorts, filters] of cases)
      for (const sort of sorts)
        for (const order of ["asc", "desc"] as const)
          for (const filter of filters) {
            const whole = await previousRunList(db, build(), { offset: 0, limit: 1000, sort, order, filter }, spec);
            const ids: string[] = [];
            let after: string | undefined;
            for (let guard = 0; guard < 100; guard++) {
              const page = await runList(db, build(), { offset: 0, limit: 7, sort, order, filter, after }, spec);
              expect(page.total).toBe(whole.total);
              ids.push(...page.rows.map((r) => r.id));
              if (!page.next) break;
              after = page.next;
            }
            expect({ sort, order, filter, ids }).toEqual({ sort, order, filter, ids: whole.rows.map((r) => r.id) });
            walked++;
          }
    expect(walked).toBe(46);
  });

  it("a short page, a full one and one past the end report the same total", async () => {
    const build = () => t.database.db.selectFrom("devices as d").where("d.organization_id", "=", t.admin.orgId).select("d.id");
    const totals = [];
    for (const page of [
      { offset: 0, limit: 1000 },
      { offset: 0, limit: 10 },
      { offset: DEVICES - 3, limit: 10 },
      { offset: DEVICES + 5, limit: 10 },
      { offset: 0, limit: 0 },
    ])
      totals.push(
        (await runList(t.database.db, build(), { ...page, sort: undefined, order: "asc", filter: [] }, DEVICE_LIST)).total,
      );
    expect(totals).toEqual([DEVICES, DEVICES, DEVICES, DEVICES, DEVICES]);
  });
});
