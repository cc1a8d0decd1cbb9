/**
 * POST /api/devices/{id}/actions and POST /api/devices/actions without a
 * device gateway (every device offline): request checks (confirmation,
 * unknown actions and fields), the per-action permission table, tenancy,
 * jobs and job groups, audit, and the job engine's rules for offline devices
 * (agent actions fail `not-connected` at once; `sync` waits queued). The
 * connected side is test/gateway/device-actions.test.ts.
 */
import { ALL, type Job, PERM } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { insertValidDevice } from "../../../test/support/device-fixtures.ts";
import type { TestDevice } from "../../../test/support/devices.ts";
import { waitUntil } from "../../../test/support/gateway.ts";
import { type TestServer, useTestServer } from "../../../test/support/test-server.ts";
import type { GatewayEventMap } from "../../gateway/events.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
type ManyBody = { action: string; jobGroup: string | null; jobs: number; skipped: { id: string; reason: string }[] };

describe("device actions (routes)", () => {
  const t = useTestServer();
  let tenant: Awaited<ReturnType<TestServer["createTenant"]>>;
  let devices: TestDevice[] = [];
  let pending: TestDevice;

  const act = <T = { jobIds: string[] } & ErrorBody>(id: string, body: unknown, token = tenant.token) =>
    t.api<T>("POST", `/api/devices/${id}/actions`, { token, body });
  const actMany = (body: unknown, token = tenant.token) =>
    t.api<ManyBody & ErrorBody>("POST", "/api/devices/actions", { token, body });
  const job = async (id: string) => (await t.api<Job>("GET", `/api/jobs/${id}`, { token: tenant.token })).body;

  beforeAll(async () => {
    tenant = await t.createTenant("Actions");
    devices = [];
    for (const name of ["one", "two", "three"]) devices.push(await insertValidDevice(t, { name, orgId: tenant.orgId }));
    pending = await insertValidDevice(t, { name: "pending", orgId: tenant.orgId, approved: false });
    for (const d of devices.slice(0, 2))
      await t.api("PUT", `/api/devices/${d.id}`, { token: tenant.token, body: { tags: ["site:paris"] } });
    await t.api("PUT", `/api/devices/${pending.id}`, { token: tenant.token, body: { tags: ["site:paris"] } });
  });

  it("an agent action on an offline device: 202 with its job, which fails not-connected and is told (jobs-finished); audited", async () => {
    const told: GatewayEventMap["jobs-finished"][] = [];
    const stopListening = t.deps.deviceLink.events.on("jobs-finished", (e) => told.push(e));
    const res = await act(devices[0]!.id, { action: "stop" });
    expect(res.status).toBe(202);
    expect(res.body.jobIds).toHaveLength(1);
    const id = res.body.jobIds[0]!;
    expect(res.headers.get("location")).toBe(`/api/jobs?ids=${id}`);
    const failed = await waitUntil(
      () => job(id),
      (j) => j.state !== "running",
      5000,
      "the stop job to end",
    );
    expect(failed).toMatchObject({ type: "stop", state: "failed", device: { id: devices[0]!.id } });
    expect(failed.error?.reason).toBe("not-connected");
    // Its end is told like a config job's: the notification engine and the job metrics hear of it.
    await waitUntil(
      () => told,
      (l) => l.length > 0,
      5000,
      "jobs-finished",
    );
    stopListening();
    expect(told).toEqual([
      {
        deviceId: devices[0]!.id,
        orgId: tenant.orgId,
        jobs: [{ id, type: "stop", state: "failed", error: failed.error, corrected: false }],
      },
    ]);
    const device = await t.database.db
      .selectFrom("devices")
      .select("data_plane")
      .where("id", "=", devices[0]!.id)
      .executeTakeFirst();
    expect(device?.data_plane).toBe("running");
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "resource_id", "actor", "after"])
      .where("organization_id", "=", tenant.orgId)
      .where("action", "=", "action-stop")
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      resource_id: devices[0]!.id,
      after: { action: "stop", devices: [devices[0]!.id], jobs: [id] },
    });
    expect(audit[0]!.actor).toContain(tenant.email);
  });

  it("sync queues a forced config job (type sync) that waits for the device", async () => {
    const res = await act(devices[1]!.id, { action: "sync" });
    expect(res.status).toBe(202);
    const queued = await job(res.body.jobIds[0]!);
    expect(queued).toMatchObject({ type: "sync", state: "queued" });
    const row = await t.database.db
      .selectFrom("devices")
      .select("desired_hash")
      .where("id", "=", devices[1]!.id)
      .executeTakeFirst();
    expect(queued.targetHash).toBe(row?.desired_hash);
  });

  it("reset needs confirm: true (400 CONFIRMATION_REQUIRED); unknown actions and fields are 400 VALIDATION_FAILED", async () => {
    for (const body of [{ action: "reset" }, { action: "reset", confirm: false }]) {
      const res = await act(devices[2]!.id, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("CONFIRMATION_REQUIRED");
    }
    const many = await actMany({ action: "reset", filter: [] });
    expect(many.status).toBe(400);
    expect(many.body.code).toBe("CONFIRMATION_REQUIRED");
    for (const body of [{ action: "reboot" }, {}, { action: "stop", force: true }, { action: "stop", confirm: "yes" }]) {
      const res = await act(devices[2]!.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
    for (const body of [
      { action: "stop" },
      { action: "stop", deviceIds: [devices[0]!.id], filter: [] },
      { action: "teleport", filter: [] },
      { action: "stop", filter: [], extra: 1 },
    ]) {
      const res = await actMany(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
    // Nothing was created by the refused requests.
    const jobs = await t.database.db.selectFrom("jobs").select("id").where("device_id", "=", devices[2]!.id).execute();
    expect(jobs).toEqual([]);
  });

  it("permissions: a viewer gets 403 for every action; put without del may stop but not reset", async () => {
    const viewer = await t.addMember("viewer", { orgId: tenant.orgId });
    for (const action of ["sync", "restart-agent", "stop", "start", "reset"]) {
      const res = await act(devices[2]!.id, { action, confirm: true }, viewer.token);
      expect(res.status, action).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
    }
    expect((await actMany({ action: "reset", confirm: true, filter: [] }, viewer.token)).status).toBe(403);

    const token = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: tenant.token,
      body: { name: "no-delete", role: "manager", permissions: { devices: PERM.get | PERM.post | PERM.put, jobs: ALL } },
    });
    expect(token.status).toBe(201);
    const reset = await act(devices[2]!.id, { action: "reset", confirm: true }, token.body.token);
    expect(reset.status).toBe(403);
    expect(reset.body.code).toBe("FORBIDDEN");
    expect((await actMany({ action: "reset", confirm: true, filter: [] }, token.body.token)).status).toBe(403);
    const stop = await act(devices[2]!.id, { action: "restart-agent" }, token.body.token);
    expect(stop.status).toBe(202);
    // The owner may reset (the job fails: the device is offline, so nothing else changes).
    const owner = await act(devices[2]!.id, { action: "reset", confirm: true });
    expect(owner.status).toBe(202);
    const failed = await waitUntil(
      () => job(owner.body.jobIds[0]!),
      (j) => j.state === "failed",
      5000,
      "the reset job to fail",
    );
    expect(failed.error?.reason).toBe("not-connected");
    const row = await t.database.db
      .selectFrom("devices")
      .select("is_approved")
      .where("id", "=", devices[2]!.id)
      .executeTakeFirst();
    expect(row?.is_approved).toBe(true);
  });

  it("a tenant cannot act on another organization's device (404), by id or in a bulk selection", async () => {
    const other = await insertValidDevice(t, { name: "admins" });
    const res = await act(other.id, { action: "stop" });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
    const many = await actMany({ action: "stop", deviceIds: [other.id] });
    expect(many.status).toBe(404);
    expect(await t.database.db.selectFrom("jobs").select("id").where("device_id", "=", other.id).execute()).toEqual([]);
    // A filter only ever reaches the caller's own devices.
    const all = await actMany({ action: "restart-agent", filter: [{ key: "name", op: "==", val: "admins" }] });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ jobGroup: null, jobs: 0 });
  });

  it("a device that is not approved: 409 for one, skipped in a bulk request", async () => {
    const res = await act(pending.id, { action: "start" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("CONFLICT");
  });

  it("many devices by tag: 202 with one job group (Location), the unapproved skipped", async () => {
    const res = await actMany({ action: "restart-agent", filter: [{ key: "tags", op: "contains", val: "site:paris" }] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ action: "restart-agent", jobs: 2, skipped: [{ id: pending.id }] });
    expect(res.headers.get("location")).toBe(`/api/jobs?group=${res.body.jobGroup}`);
    const listed = await t.api<Job[]>("GET", "/api/jobs", { token: tenant.token, query: { group: res.body.jobGroup! } });
    expect(listed.body.map((j) => j.device.id).sort()).toEqual([devices[0]!.id, devices[1]!.id].sort());
    expect(listed.body.every((j) => j.type === "restart-agent")).toBe(true);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["resource_id", "after"])
      .where("organization_id", "=", tenant.orgId)
      .where("action", "=", "action-restart-agent")
      .where("resource_id", "is", null)
      .orderBy("at", "desc")
      .executeTakeFirstOrThrow();
    expect((audit.after as { devices: string[] }).devices.sort()).toEqual([devices[0]!.id, devices[1]!.id].sort());
  });
});
