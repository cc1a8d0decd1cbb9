/**
 * GET /api/jobs is built as JSON by the database (services/jobs/list-json.ts).
 * It must answer exactly what the object path (`listJobs`, `toJob`) answers:
 * same jobs in the same order, same values, same total and next cursor, for
 * filters (on the job and on its device), sorts, pages, cursors, `ids` and
 * `group`, over jobs with and without an error, a result (an object, a JSON
 * null, none), dates given in microseconds, and names needing JSON escapes.
 */
import { randomUUID } from "node:crypto";
import { type Job, ListQueryRaw } from "@tern/protocol";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { insertTestJob, insertValidDevice } from "../../../test/support/device-fixtures.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { foldListQuery, RECORDS_NEXT_HEADER } from "../../http/list-query.ts";
import { serviceCtx } from "../../services/context.ts";
import { type JobListInput, listJobs } from "../../services/jobs/jobs.ts";

describe("GET /api/jobs (JSON built by the database)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  const ids: string[] = [];
  const group = randomUUID();

  beforeAll(async () => {
    tenant = await t.createTenant("Job JSON");
    const devices = [
      await insertValidDevice(t, { name: 'quote "q" \\ back', orgId: tenant.orgId }),
      await insertValidDevice(t, { name: "ünïcode ✓", orgId: tenant.orgId }),
    ];
    const states = ["queued", "running", "complete", "failed"] as const;
    for (let i = 0; i < 10; i++) {
      const id = await insertTestJob(t, devices[i % 2]!.id, {
        orgId: tenant.orgId,
        state: states[i % 4],
        type: i % 3 ? "modify" : "ping",
        // Two jobs created at the same instant: the tiebreaker orders them.
        createdAt: new Date(Date.UTC(2026, 0, 1, 10, 0, i === 5 ? 4 : i)),
      });
      ids.push(id);
    }
    const db = t.database.db;
    await sql`update jobs set started_at = '2026-01-02 10:00:00.123456+00', corrected_at = '2026-01-02 11:00:00.999999+00',
      finished_at = '2026-01-02 12:00:00.0005+00', attempts = 2 where id = ${ids[2]}::uuid`.execute(db);
    await sql`update jobs set error = ${JSON.stringify({ code: "APPLY_FAILED", message: 'tab\there "x"' })}::jsonb,
      target_hash = null where id = ${ids[3]}::uuid`.execute(db);
    await sql`update jobs set result = ${JSON.stringify({ loss: 0.5, lines: ["a", "ü"], nested: { n: 1.25 } })}::jsonb
      where id = ${ids[0]}::uuid`.execute(db);
    await sql`update jobs set result = 'null'::jsonb where id = ${ids[6]}::uuid`.execute(db);
    await sql`update jobs set group_id = ${group}::uuid where id in (${ids[1]}::uuid, ${ids[2]}::uuid, ${ids[3]}::uuid)`.execute(
      db,
    );
  });

  /** What the object path answers for the same query. */
  async function expected(query: Record<string, string>, narrow: Omit<JobListInput, "query"> = {}) {
    const raw = ListQueryRaw.parse(query);
    const access = { org: { id: tenant.orgId, accountId: tenant.accountId, name: "Job JSON" } };
    const ctx = serviceCtx(t.deps, { ...access, actor: { kind: "system", label: "test" }, role: "owner" } as never);
    return listJobs(ctx, { query: foldListQuery({ ...raw, ...(query.after ? { after: query.after } : {}) }), ...narrow });
  }

  const filter = (key: string, op: string, val: unknown) => JSON.stringify([{ key, op, val }]);
  const cases: Record<string, string>[] = [
    {},
    { limit: "3" },
    { limit: "4", offset: "3" },
    { sort: "createdAt", order: "asc" },
    { sort: "state" },
    { sort: "device.name", order: "desc" },
    { filter: filter("state", "in", ["queued", "failed"]) },
    { filter: filter("device.name", "contains", "q") },
    { filter: filter("startedAt", ">", "2026-01-01T00:00:00Z") },
    // A sort key that is null on all but one job: pages and their last rows among the nulls, either way.
    { sort: "startedAt", order: "desc", limit: "3" },
    { sort: "startedAt", order: "asc", limit: "3", offset: "2" },
    { limit: "0" },
    { offset: "50" },
  ];

  it("answers what the object path answers: same rows, order, values, total and next cursor", async () => {
    for (const query of cases) {
      const label = JSON.stringify(query);
      const res = await t.api<Job[]>("GET", "/api/jobs", { token: tenant.token, query });
      expect(res.status, label).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const want = await expected(query);
      expect(res.body, label).toEqual(want.items);
      expect(JSON.stringify(res.body), label).toBe(JSON.stringify(want.items));
      expect(res.headers.get("records-total"), label).toBe(String(want.total));
      expect(res.headers.get(RECORDS_NEXT_HEADER), label).toBe(want.next);
    }
  });

  it("covers the values it claims to: a result or none, an error, dates given in microseconds", async () => {
    const res = await t.api<Job[]>("GET", "/api/jobs", { token: tenant.token });
    const byId = new Map(res.body.map((j) => [j.id, j]));
    expect(byId.get(ids[0]!)?.result).toEqual({ loss: 0.5, lines: ["a", "ü"], nested: { n: 1.25 } });
    expect("result" in byId.get(ids[6]!)!).toBe(false);
    expect("result" in byId.get(ids[1]!)!).toBe(false);
    expect(byId.get(ids[2]!)).toMatchObject({
      startedAt: "2026-01-02T10:00:00.123Z",
      // Stored as timestamptz(3): rounded to the millisecond on the way in.
      correctedAt: "2026-01-02T11:00:01.000Z",
      finishedAt: "2026-01-02T12:00:00.001Z",
      attempts: 2,
    });
    expect(byId.get(ids[3]!)).toMatchObject({ targetHash: null, error: { code: "APPLY_FAILED", message: 'tab\there "x"' } });
    expect(byId.get(ids[1]!)?.device.name).toBe("ünïcode ✓");
  });

  it("walks the same pages by cursor, and narrows by ids and group the same way", async () => {
    let after: string | undefined;
    const seen: string[] = [];
    for (let page = 0; page < 6; page++) {
      const query: Record<string, string> = { limit: "3", sort: "createdAt", ...(after ? { after } : {}) };
      const res = await t.api<Job[]>("GET", "/api/jobs", { token: tenant.token, query });
      const want = await expected(query);
      expect(res.body).toEqual(want.items);
      seen.push(...res.body.map((j) => j.id));
      const next = res.headers.get(RECORDS_NEXT_HEADER);
      expect(next).toBe(want.next);
      if (!next) break;
      after = next;
    }
    expect([...seen].sort()).toEqual([...ids].sort());

    const some = [ids[0]!, ids[4]!, ids[9]!];
    const byIds = await t.api<Job[]>("GET", "/api/jobs", { token: tenant.token, query: { ids: some.join(",") } });
    const wantIds = await expected({}, { ids: some });
    expect(byIds.body).toEqual(wantIds.items);
    expect(byIds.body).toHaveLength(3);
    const byGroup = await t.api<Job[]>("GET", "/api/jobs", { token: tenant.token, query: { group } });
    const wantGroup = await expected({}, { group });
    expect(byGroup.body).toEqual(wantGroup.items);
    expect(byGroup.headers.get("records-total")).toBe("3");
  });
});
