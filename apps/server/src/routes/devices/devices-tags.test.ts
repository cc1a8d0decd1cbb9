/**
 * Device tags: set whole with PUT /api/devices/{id} (validated, deduplicated),
 * shown by GET and the list, filtered by the list (`tags` contains / in /
 * !contains / == null) and by the shared device selection (bulk routes), and
 * edited on many devices with POST /api/devices/tags.
 */
import type { Device, DeviceSummary } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import type { TestDevice } from "../../../test/support/devices.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import { serviceCtx } from "../../services/context.ts";
import { selectDeviceIds } from "../../services/devices/selection.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };

describe("device tags", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  let devices: TestDevice[] = [];

  const put = (id: string, body: unknown) =>
    t.api<Device & ErrorBody>("PUT", `/api/devices/${id}`, { token: tenant.token, body });
  const list = <T = Device[]>(filter: unknown, extra: Record<string, string> = {}) =>
    t.api<T>("GET", "/api/devices", { token: tenant.token, query: { filter: JSON.stringify(filter), ...extra } });
  const names = (res: { body: { name: string }[] }) => res.body.map((d) => d.name);
  const bulk = (body: unknown) =>
    t.api<{ matched: number; changed: number } & ErrorBody>("POST", "/api/devices/tags", { token: tenant.token, body });

  beforeAll(async () => {
    tenant = await t.createTenant("Tagged");
    devices = [];
    for (const name of ["alpha", "bravo", "charlie", "delta"])
      devices.push(await insertValidDevice(t, { name, orgId: tenant.orgId }));
    const [alpha, bravo, charlie] = devices;
    // The first PUT of a fixture device compiles its config (202 with the job); tags alone queue none.
    expect([200, 202]).toContain((await put(alpha!.id, { tags: ["site:paris", "core", "core", " edge/v2 "] })).status);
    expect([200, 202]).toContain((await put(bravo!.id, { tags: ["site:lyon", "edge/v2"] })).status);
    expect([200, 202]).toContain((await put(charlie!.id, { tags: ["site:paris"] })).status);
    expect([200, 202]).toContain((await put(devices[3]!.id, { description: "no tags" })).status);
  });

  it("PUT stores them trimmed and deduplicated; GET, the list and the summary show them; no job", async () => {
    const res = await t.api<Device>("GET", `/api/devices/${devices[0]!.id}`, { token: tenant.token });
    expect(res.body.tags).toEqual(["site:paris", "core", "edge/v2"]);
    expect(res.body.dataPlane).toBe("running");
    const summary = await t.api<DeviceSummary[]>("GET", "/api/devices", { token: tenant.token, query: { response: "summary" } });
    expect(summary.body.map((d) => [d.name, d.tags])).toEqual([
      ["alpha", ["site:paris", "core", "edge/v2"]],
      ["bravo", ["site:lyon", "edge/v2"]],
      ["charlie", ["site:paris"]],
      ["delta", []],
    ]);
    // Tags are not configuration: changing them queues no job.
    const jobs = await t.database.db.selectFrom("jobs").select("id").where("device_id", "=", devices[2]!.id).execute();
    const again = await put(devices[2]!.id, { tags: ["site:paris", "new"] });
    expect(again.status).toBe(200);
    expect(await t.database.db.selectFrom("jobs").select("id").where("device_id", "=", devices[2]!.id).execute()).toEqual(jobs);
    expect((await put(devices[2]!.id, { tags: ["site:paris"] })).status).toBe(200);
  });

  it("refuses bad tags with 400 VALIDATION_FAILED naming them, and changes nothing", async () => {
    const cases: [unknown, string][] = [
      [["has space"], "tags.0"],
      [[""], "tags.0"],
      [["x".repeat(65)], "tags.0"],
      [["ok", "semi;colon"], "tags.1"],
      [Array.from({ length: 33 }, (_, i) => `t${i}`), "tags"],
      ["not-a-list", "tags"],
    ];
    for (const [tags, path] of cases) {
      const res = await put(devices[3]!.id, { tags });
      expect(res.status, JSON.stringify(tags)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
      expect(res.body.details.map((d) => d.path)).toContain(path);
    }
    // 32 distinct (40 given with duplicates) is fine.
    const many = [...Array.from({ length: 32 }, (_, i) => `t${i}`), ...Array.from({ length: 8 }, (_, i) => `t${i}`)];
    const ok = await put(devices[3]!.id, { tags: many });
    expect(ok.status).toBe(200);
    expect(ok.body.tags).toHaveLength(32);
    expect((await put(devices[3]!.id, { tags: [] })).body.tags).toEqual([]);
  });

  it("the list filters by tag: contains (has it), in (any), !contains (lacks it), == null (none)", async () => {
    expect(names(await list([{ key: "tags", op: "contains", val: "site:paris" }]))).toEqual(["alpha", "charlie"]);
    expect(names(await list([{ key: "tags", op: "in", val: ["site:lyon", "core"] }]))).toEqual(["alpha", "bravo"]);
    expect(names(await list([{ key: "tags", op: "!contains", val: "edge/v2" }]))).toEqual(["charlie", "delta"]);
    expect(names(await list([{ key: "tags", op: "==", val: null }]))).toEqual(["delta"]);
    // Exact tags, not substrings; combined with other keys.
    expect(names(await list([{ key: "tags", op: "contains", val: "paris" }]))).toEqual([]);
    expect(
      names(
        await list([
          { key: "tags", op: "contains", val: "site:paris" },
          { key: "name", op: "!=", val: "alpha" },
        ]),
      ),
    ).toEqual(["charlie"]);
    const ids = await list<string[]>([{ key: "tags", op: "contains", val: "edge/v2" }], { response: "ids" });
    expect(ids.body.sort()).toEqual([devices[0]!.id, devices[1]!.id].sort());
    expect(ids.headers.get("records-total")).toBe("2");
  });

  it("refuses tag filters it cannot run (400 VALIDATION_FAILED) and sorting by tags", async () => {
    for (const filter of [
      [{ key: "tags", op: "<", val: "a" }],
      [{ key: "tags", op: "==", val: "a" }],
      [{ key: "tags", op: "contains", val: true }],
    ]) {
      const res = await list<ErrorBody>(filter);
      expect(res.status, JSON.stringify(filter)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
    const sorted = await t.api<ErrorBody>("GET", "/api/devices", { token: tenant.token, query: { sort: "tags" } });
    expect(sorted.status).toBe(400);
    expect(sorted.body.details[0]?.path).toBe("sort");
  });

  it("the shared device selection takes tags (the target of bulk routes, actions and upgrades)", async () => {
    const ctx = serviceCtx(t.deps, {
      org: { id: tenant.orgId, accountId: tenant.accountId, name: "Tagged" },
      actor: { label: "test", userId: null, tokenId: null },
      role: "owner",
      permissions: {} as never,
      accountRole: "owner",
    } as never);
    const paris = await selectDeviceIds(ctx, { filter: [{ key: "tags", op: "contains", val: "site:paris" }] });
    expect(paris.sort()).toEqual([devices[0]!.id, devices[2]!.id].sort());
    const anyOf = await selectDeviceIds(ctx, { filter: [{ key: "tags", op: "in", val: ["site:lyon", "nothing"] }] });
    expect(anyOf).toEqual([devices[1]!.id]);
    // Another organization's tagged devices are never selected.
    const other = await insertValidDevice(t, { name: "admin-paris" });
    await t.api("PUT", `/api/devices/${other.id}`, { token: t.admin.token, body: { tags: ["site:paris"] } });
    expect((await selectDeviceIds(ctx, { filter: [{ key: "tags", op: "contains", val: "site:paris" }] })).length).toBe(2);
  });

  it("POST /devices/tags adds and removes tags by filter or ids; over 32 refuses all; audited", async () => {
    const added = await bulk({ filter: [{ key: "tags", op: "contains", val: "site:paris" }], add: ["rollout:canary", "core"] });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ matched: 2, changed: 2 });
    const tagsOf = async (d: TestDevice) =>
      (await t.api<Device>("GET", `/api/devices/${d.id}`, { token: tenant.token })).body.tags;
    expect(await tagsOf(devices[0]!)).toEqual(["site:paris", "core", "edge/v2", "rollout:canary"]);
    expect(await tagsOf(devices[2]!)).toEqual(["site:paris", "rollout:canary", "core"]);

    const removed = await bulk({ deviceIds: [devices[0]!.id, devices[1]!.id], remove: ["rollout:canary", "absent"] });
    expect(removed.body).toEqual({ matched: 2, changed: 1 });
    expect(await tagsOf(devices[0]!)).toEqual(["site:paris", "core", "edge/v2"]);

    // delta would end with 33 tags: nothing changes anywhere.
    await put(devices[3]!.id, { tags: Array.from({ length: 31 }, (_, i) => `t${i}`) });
    const over = await bulk({ filter: [], add: ["x1", "x2"] });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe("VALIDATION_FAILED");
    expect(over.body.details[0]?.message).toContain(devices[3]!.id);
    expect(await tagsOf(devices[1]!)).toEqual(["site:lyon", "edge/v2"]);

    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["after"])
      .where("organization_id", "=", tenant.orgId)
      .where("action", "=", "tags")
      .orderBy("at")
      .execute();
    expect(audit.map((a) => (a.after as { devices: string[] }).devices.length)).toEqual([2, 1]);
  });

  it("POST /devices/tags refuses bad bodies (400 VALIDATION_FAILED) and other organizations' devices (404)", async () => {
    for (const body of [
      { filter: [], add: ["bad tag"] },
      { filter: [] },
      { add: ["x"] },
      { deviceIds: [devices[0]!.id], filter: [], add: ["x"] },
      { filter: [], add: ["x"], extra: 1 },
      { filter: [{ key: "nope", op: "==", val: 1 }], add: ["x"] },
    ]) {
      const res = await bulk(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
    const admins = await insertValidDevice(t, { name: "admins-own" });
    const res = await bulk({ deviceIds: [admins.id], add: ["x"] });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
  });
});
