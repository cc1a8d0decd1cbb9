/** /api/jobs: list with the device object and filters, one job, delete one (cancels a queued job) and by filter. */
import { randomUUID } from "node:crypto";
import { type Job, Job as JobSchema } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertTestJob, insertValidDevice } from "../../../test/support/device-fixtures.ts";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };

const at = (iso: string) => new Date(iso);

describe("GET /api/jobs", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  let edge: TestDevice;
  let core: TestDevice;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    tenant = await t.createTenant("Jobs");
    edge = await insertValidDevice(t, { name: "edge-1", orgId: tenant.orgId });
    core = await insertValidDevice(t, { name: "core-1", orgId: tenant.orgId });
    const org = { orgId: tenant.orgId };
    ids.q1 = await insertTestJob(t, edge.id, { ...org, state: "queued", type: "modify", createdAt: at("2026-01-01T10:00:00Z") });
    ids.r1 = await insertTestJob(t, edge.id, {
      ...org,
      state: "running",
      type: "tunnels",
      createdAt: at("2026-01-02T10:00:00Z"),
    });
    ids.c1 = await insertTestJob(t, core.id, {
      ...org,
      state: "complete",
      type: "modify",
      createdAt: at("2026-01-03T10:00:00Z"),
      finishedAt: at("2026-01-03T10:00:05Z"),
    });
    ids.f1 = await insertTestJob(t, core.id, {
      ...org,
      state: "failed",
      type: "vrrp",
      createdAt: at("2026-01-04T10:00:00Z"),
      finishedAt: at("2026-01-04T10:03:00Z"),
      createdBy: "ops@example.com",
    });
  });

  const list = (query: Record<string, string | number> = {}) => t.api<Job[]>("GET", "/api/jobs", { token: tenant.token, query });
  const filter = (...filters: [string, string, unknown][]) => JSON.stringify(filters.map(([key, op, val]) => ({ key, op, val })));
  const idsOf = (res: { body: Job[] }) => res.body.map((j) => j.id);

  it("lists jobs newest first, each with its device's id, name and hostname (6.3.1)", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.headers.get("records-total")).toBe("4");
    expect(idsOf(res)).toEqual([ids.f1, ids.c1, ids.r1, ids.q1]);
    for (const job of res.body) expect(JobSchema.safeParse(job).success).toBe(true);
    expect(res.body[0]).toEqual({
      id: ids.f1,
      org: tenant.orgId,
      type: "vrrp",
      state: "failed",
      device: { id: core.id, name: "core-1", hostname: "core-1" },
      tasks: [{ kind: "test", summary: "a test job" }],
      targetHash: "ab".repeat(32),
      error: null,
      correctedAt: null,
      attempts: 0,
      createdBy: "ops@example.com",
      createdAt: "2026-01-04T10:00:00.000Z",
      startedAt: null,
      finishedAt: "2026-01-04T10:03:00.000Z",
    });
  });

  it("filters by state, type, device, device name and hostname, time ranges, and every op", async () => {
    const cases: [string, [string, string, unknown][], string[]][] = [
      ["state ==", [["state", "==", "queued"]], [ids.q1!]],
      ["state in", [["state", "in", ["queued", "running"]]], [ids.r1!, ids.q1!]],
      ["state !=", [["state", "!=", "failed"]], [ids.c1!, ids.r1!, ids.q1!]],
      ["type", [["type", "==", "tunnels"]], [ids.r1!]],
      ["device.id", [["device.id", "==", core.id]], [ids.f1!, ids.c1!]],
      ["device.name", [["device.name", "==", "edge-1"]], [ids.r1!, ids.q1!]],
      ["device.name contains", [["device.name", "contains", "CORE"]], [ids.f1!, ids.c1!]],
      ["device.hostname !contains", [["device.hostname", "!contains", "edge"]], [ids.f1!, ids.c1!]],
      [
        "createdAt range",
        [
          ["createdAt", ">=", "2026-01-02T00:00:00Z"],
          ["createdAt", "<", "2026-01-04T00:00:00Z"],
        ],
        [ids.c1!, ids.r1!],
      ],
      ["createdAt <=", [["createdAt", "<=", "2026-01-01T10:00:00Z"]], [ids.q1!]],
      ["finishedAt >", [["finishedAt", ">", "2026-01-03T12:00:00Z"]], [ids.f1!]],
      ["finishedAt null", [["finishedAt", "==", null]], [ids.r1!, ids.q1!]],
      ["createdBy", [["createdBy", "==", "ops@example.com"]], [ids.f1!]],
    ];
    for (const [label, filters, expected] of cases) {
      const res = await list({ filter: filter(...filters) });
      expect(res.status, label).toBe(200);
      expect(idsOf(res), label).toEqual(expected);
      expect(res.headers.get("records-total"), label).toBe(String(expected.length));
    }
  });

  it("ids lists specific jobs (the Location of a 202); sort, order and paging", async () => {
    expect(idsOf(await list({ ids: `${ids.q1},${ids.c1}` }))).toEqual([ids.c1, ids.q1]);
    expect(idsOf(await list({ sort: "createdAt", order: "asc" }))).toEqual([ids.q1, ids.r1, ids.c1, ids.f1]);
    const aliases = await list({ sortField: "device.name", sortOrder: "desc" });
    expect(aliases.body.map((j) => j.device.name)).toEqual(["edge-1", "edge-1", "core-1", "core-1"]);
    const byName = await list({ sort: "device.name", order: "asc" });
    expect(byName.body.map((j) => j.device.name)).toEqual(["core-1", "core-1", "edge-1", "edge-1"]);
    const page = await list({ offset: 1, limit: 2 });
    expect(idsOf(page)).toEqual([ids.c1, ids.r1]);
    expect(page.headers.get("records-total")).toBe("4");
  });

  it("totals: counted from the jobs alone unless a filter names the device, the same either way", async () => {
    // Each total against the rows themselves: ids alone, ids with a device filter (counted with the join), a
    // page past the end (counted on its own), and another organization's jobs left out of both counts.
    const other = await t.createTenant("Jobs elsewhere");
    const away = await insertValidDevice(t, { name: "edge-1", orgId: other.orgId });
    await insertTestJob(t, away.id, { orgId: other.orgId, state: "queued", type: "modify" });
    const cases: [Record<string, string | number>, string[], string][] = [
      [{ ids: `${ids.q1},${ids.c1}` }, [ids.c1!, ids.q1!], "2"],
      [{ ids: `${ids.q1},${ids.c1}`, filter: filter(["device.name", "==", "edge-1"]) }, [ids.q1!], "1"],
      [{ filter: filter(["device.name", "==", "edge-1"]) }, [ids.r1!, ids.q1!], "2"],
      [{ filter: filter(["state", "!=", "failed"], ["device.hostname", "contains", "core"]) }, [ids.c1!], "1"],
      [{ offset: 10 }, [], "4"],
      [{ limit: 0 }, [], "4"],
      [{ offset: 10, filter: filter(["device.name", "==", "core-1"]) }, [], "2"],
    ];
    for (const [query, expected, total] of cases) {
      const res = await list(query);
      expect(res.status, JSON.stringify(query)).toBe(200);
      expect(idsOf(res), JSON.stringify(query)).toEqual(expected);
      expect(res.headers.get("records-total"), JSON.stringify(query)).toBe(total);
    }
    const theirs = await t.api<Job[]>("GET", "/api/jobs", { token: other.token });
    expect(theirs.headers.get("records-total")).toBe("1");
  });

  it("bad queries are 400 naming the parameter; other organizations' jobs are invisible", async () => {
    for (const [query, path] of [
      [{ filter: filter(["device.secret", "==", 1]) }, "filter.0.key"],
      [{ filter: filter(["createdAt", ">", "soon"]) }, "filter.0.val"],
      [{ sort: "tasks" }, "sort"],
      [{ ids: "1,2" }, "ids.0"],
    ] as const) {
      const res = await t.api<ErrorBody>("GET", "/api/jobs", { token: tenant.token, query });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    const mine = await t.api<Job[]>("GET", "/api/jobs", { token: t.admin.token });
    expect(mine.body.map((j) => j.id)).not.toContain(ids.q1);
    expect((await t.api<Job[]>("GET", "/api/jobs", { token: t.admin.token, query: { ids: ids.q1! } })).body).toEqual([]);
  });

  it("GET /api/jobs/{id} answers one job; unknown 404; another tenant's 404", async () => {
    const res = await t.api<Job>("GET", `/api/jobs/${ids.r1}`, { token: tenant.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids.r1, state: "running", device: { name: "edge-1" } });
    expect((await t.api("GET", `/api/jobs/${randomUUID()}`, { token: tenant.token })).status).toBe(404);
    expect((await t.api("GET", `/api/jobs/${ids.r1}`, { token: t.admin.token })).status).toBe(404);
  });
});

describe("DELETE /api/jobs/{id} and DELETE /api/jobs", () => {
  const t = useTestServer();
  const exists = async (id: string) =>
    (await t.database.db.selectFrom("jobs").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;

  it("deleting a queued job cancels it (the row is gone), audited; the device's desired config stays", async () => {
    const device = await insertValidDevice(t, { approved: false });
    const approval = await t.api<{ jobIds: string[] }>("PUT", `/api/devices/${device.id}`, {
      token: t.admin.token,
      body: { isApproved: true },
    });
    const [jobId] = approval.body.jobIds;
    const desired = async () =>
      (await t.database.db.selectFrom("devices").select("desired_hash").where("id", "=", device.id).executeTakeFirstOrThrow())
        .desired_hash;
    const hash = await desired();
    expect(hash).not.toBeNull();
    expect((await t.api("DELETE", `/api/jobs/${jobId}`, { token: t.admin.token })).status).toBe(204);
    expect(await exists(jobId!)).toBe(false);
    expect(await desired()).toBe(hash);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "before"])
      .where("resource", "=", "jobs")
      .where("resource_id", "=", jobId!)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ action: "delete", before: { id: jobId, state: "queued" } });
    const again = await t.api<ErrorBody>("DELETE", `/api/jobs/${jobId}`, { token: t.admin.token });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("NOT_FOUND");
  });

  it("deletes running and finished jobs too; a viewer may not delete", async () => {
    const device = await insertValidDevice(t);
    const running = await insertTestJob(t, device.id, { state: "running" });
    const viewer = await t.addMember("viewer");
    expect((await t.api("DELETE", `/api/jobs/${running}`, { token: viewer.token })).status).toBe(403);
    expect((await t.api("DELETE", `/api/jobs/${running}`, { token: t.admin.token })).status).toBe(204);
    expect(await exists(running)).toBe(false);
  });

  it("bulk: refuses an empty selection unless all=true; deletes every match without paging; one audit entry", async () => {
    const tenant = await t.createTenant("Bulk jobs");
    const a = await insertValidDevice(t, { name: "bulk-a", orgId: tenant.orgId });
    const b = await insertValidDevice(t, { name: "bulk-b", orgId: tenant.orgId });
    const org = { orgId: tenant.orgId };
    const done = [
      await insertTestJob(t, a.id, { ...org, state: "complete" }),
      await insertTestJob(t, a.id, { ...org, state: "failed" }),
      await insertTestJob(t, b.id, { ...org, state: "complete" }),
    ];
    const queued = await insertTestJob(t, b.id, { ...org, state: "queued" });
    const foreign = await insertTestJob(t, (await insertValidDevice(t)).id, { state: "complete" });
    const del = (query: Record<string, string>) =>
      t.api<{ deleted: number } & ErrorBody>("DELETE", "/api/jobs", { token: tenant.token, query });

    const empty = await del({});
    expect(empty.status).toBe(400);
    expect(empty.body.details[0]?.path).toBe("filter");

    const finished = await del({ filter: JSON.stringify([{ key: "state", op: "in", val: ["complete", "failed"] }]) });
    expect(finished.status).toBe(200);
    expect(finished.body.deleted).toBe(3);
    for (const id of done) expect(await exists(id)).toBe(false);
    expect(await exists(queued)).toBe(true);
    expect(await exists(foreign)).toBe(true);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "before"])
      .where("resource", "=", "jobs")
      .where("organization_id", "=", tenant.orgId)
      .executeTakeFirstOrThrow();
    expect(audit.action).toBe("delete-many");
    expect((audit.before as { ids: string[] }).ids.sort()).toEqual([...done].sort());

    expect((await del({ filter: JSON.stringify([{ key: "device.name", op: "==", val: "nobody" }]) })).body.deleted).toBe(0);
    expect((await del({ ids: queued })).body.deleted).toBe(1);
    await insertTestJob(t, a.id, org);
    expect((await del({ all: "true" })).body.deleted).toBe(1);
    expect(await exists(foreign)).toBe(true);
    const bad = await del({ filter: JSON.stringify([{ key: "tasks", op: "==", val: "x" }]) });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("filter.0.key");
  });
});
