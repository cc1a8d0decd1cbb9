/**
 * Agent rollouts: planning (devices already on the version skipped, canaries first, batches of batchSize), the
 * scheduler (services/agent-upgrades/rollout-duty.ts, run directly here with a chosen clock): one batch at a
 * time, only inside the window, a failed canary pauses, overdue devices fail, finished rollouts complete; the
 * pause/resume/cancel state machine; the report; versions per device; tenancy and permissions.
 */
import type { AgentVersionCount, Job, Rollout, RolloutReport } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { uploadTestPackage } from "../../../test/support/agent-upgrades.ts";
import { insertTestDevice } from "../../../test/support/devices.ts";
import { useTestServer } from "../../../test/support/test-server.ts";
import { scheduleRollouts } from "../../services/agent-upgrades/rollout-duty.ts";

type ErrorBody = { code: string };
const t = useTestServer();

async function devices(n: number, version = "0.1.0"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = await insertTestDevice(t);
    await t.database.db.updateTable("devices").set({ agent_version: version }).where("id", "=", d.id).execute();
    ids.push(d.id);
  }
  return ids;
}

async function rollout(body: Record<string, unknown>, token = t.admin.token) {
  return t.api<Rollout & ErrorBody>("POST", "/api/agent-upgrades", { token, body });
}

const report = async (id: string) =>
  (await t.api<RolloutReport>("GET", `/api/agent-upgrades/${id}`, { token: t.admin.token })).body;

/** Marks the rollout's devices in `state` as the agents' reports would. */
async function finish(
  rolloutId: string,
  from: "sending" | "installing",
  to: "upgraded" | "rolled-back" | "failed",
  names?: string[],
) {
  let q = t.database.db
    .updateTable("agent_rollout_devices")
    .set({ state: to, finished_at: new Date() })
    .where("rollout_id", "=", rolloutId)
    .where("state", "=", from);
  if (names) q = q.where("device_name", "in", names);
  await q.execute();
}

/** Only this rollout's devices: other tests' rollouts share the database. */
const started = async (rolloutId: string, now?: Date) =>
  (await scheduleRollouts(t.database.db, now)).started.filter((s) => s.rolloutId === rolloutId);

describe("agent rollouts", () => {
  it("plans canaries then batches, skips devices already on the version, and runs one batch at a time to completion", async () => {
    const pkg = await uploadTestPackage(t, { version: "3.0.0" });
    const ids = await devices(10);
    const [current] = await devices(1, "3.0.0");
    const res = await rollout({ package: pkg.id, target: { deviceIds: [...ids, current] }, canaryPercent: 20, batchSize: 3 });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ state: "running", version: "3.0.0", counts: { pending: 10, skipped: 1 } });
    const planned = await report(res.body.id);
    const batches = new Map<number, { canary: boolean }[]>();
    for (const d of planned.devices.filter((d) => d.state === "pending"))
      batches.set(d.batch, [...(batches.get(d.batch) ?? []), d]);
    expect([...batches.entries()].map(([b, ds]) => [b, ds.length, ds.every((d) => d.canary)])).toEqual([
      [0, 2, true],
      [1, 3, false],
      [2, 3, false],
      [3, 2, false],
    ]);
    expect(planned.devices.find((d) => d.device === current)).toMatchObject({ state: "skipped", detail: "already runs 3.0.0" });

    const sizes: number[] = [];
    for (let round = 0; round < 4; round++) {
      const s = await started(res.body.id);
      sizes.push(s.length);
      expect(s.every((x) => x.packageId === pkg.id && x.healthTimeoutSec === 300)).toBe(true);
      // While a batch is in flight, nothing else starts.
      expect(await started(res.body.id)).toEqual([]);
      await finish(res.body.id, "sending", "upgraded");
    }
    expect(sizes).toEqual([2, 3, 3, 2]);
    await scheduleRollouts(t.database.db);
    expect(await report(res.body.id)).toMatchObject({ state: "complete", counts: { upgraded: 10, skipped: 1, pending: 0 } });
  });

  it("a canary that rolls back pauses the rollout with the reason; resume goes on with the next batch", async () => {
    const pkg = await uploadTestPackage(t);
    const ids = await devices(4);
    const res = await rollout({ package: pkg.id, target: { deviceIds: ids }, canaryPercent: 50, batchSize: 2 });
    expect((await started(res.body.id)).length).toBe(2);
    const canaries = (await report(res.body.id)).devices.filter((d) => d.canary).map((d) => d.name);
    await finish(res.body.id, "sending", "rolled-back", [canaries[0]!]);
    await finish(res.body.id, "sending", "upgraded", [canaries[1]!]);
    expect(await started(res.body.id)).toEqual([]);
    const paused = await report(res.body.id);
    expect(paused.state).toBe("paused");
    expect(paused.pausedReason).toBe(`canary ${canaries[0]} rolled-back`);
    expect(await started(res.body.id)).toEqual([]);
    const resumed = await t.api<Rollout>("POST", `/api/agent-upgrades/${res.body.id}/resume`, { token: t.admin.token });
    expect(resumed.body.state).toBe("running");
    expect((await started(res.body.id)).length).toBe(2);
  });

  it("devices not back in time fail; starts happen only inside the maintenance window (which may wrap midnight)", async () => {
    const pkg = await uploadTestPackage(t);
    const ids = await devices(2);
    const res = await rollout({
      package: pkg.id,
      target: { deviceIds: ids },
      canaryPercent: 0,
      batchSize: 1,
      healthTimeoutSec: 30,
      window: { start: "22:00", end: "02:00" },
    });
    const day = (hhmm: string) => new Date(`${new Date().toISOString().slice(0, 10)}T${hhmm}:00Z`);
    expect(await started(res.body.id, day("12:00"))).toEqual([]);
    expect((await started(res.body.id, day("23:30"))).length).toBe(1);
    // In flight and not overdue yet (deadline: transfer allowance 300 s + health time 30 s).
    expect(await started(res.body.id, day("23:31"))).toEqual([]);
    // Overdue at 23:40: that device fails, and (no canaries) the next one starts.
    expect((await started(res.body.id, day("23:40"))).length).toBe(1);
    const r = await report(res.body.id);
    expect(r.devices.filter((d) => d.state === "failed").map((d) => d.detail)).toEqual([
      "not back healthy on the new version in time",
    ]);
    expect(r.state).toBe("running");
    // Each started device has its upgrade job in the rollout's group: the overdue one failed (`timeout`).
    const jobs = await t.api<Job[]>("GET", "/api/jobs", { token: t.admin.token, query: { group: res.body.id } });
    expect(jobs.body.map((j) => [j.type, j.state, j.error?.reason ?? null]).sort()).toEqual([
      ["upgrade", "failed", "timeout"],
      ["upgrade", "running", null],
    ]);
  });

  it("pause, resume and cancel follow the state machine (409 ROLLOUT_CONFLICT otherwise); cancel skips what was not started", async () => {
    const pkg = await uploadTestPackage(t);
    const res = await rollout({ package: pkg.id, target: { deviceIds: await devices(3) }, canaryPercent: 0, batchSize: 1 });
    const act = (a: string) =>
      t.api<Rollout & ErrorBody>("POST", `/api/agent-upgrades/${res.body.id}/${a}`, { token: t.admin.token });
    expect((await act("resume")).body.code).toBe("ROLLOUT_CONFLICT");
    expect((await act("pause")).body).toMatchObject({ state: "paused", pausedReason: `paused by ${t.admin.email}` });
    expect((await act("pause")).status).toBe(409);
    expect((await act("resume")).body.state).toBe("running");
    expect((await started(res.body.id)).length).toBe(1);
    const cancelled = await act("cancel");
    expect(cancelled.body).toMatchObject({ state: "cancelled", counts: { sending: 1, skipped: 2 } });
    expect((await act("resume")).body.code).toBe("ROLLOUT_CONFLICT");
    expect(await started(res.body.id)).toEqual([]);
  });

  it("targets by filter (the device selection's keys, versions.agent included); a target with no device is refused", async () => {
    const pkg = await uploadTestPackage(t);
    await devices(2, "0.0.7-filter");
    const res = await rollout({
      package: pkg.id,
      target: { filter: [{ key: "versions.agent", op: "==", val: "0.0.7-filter" }] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.counts.pending).toBe(2);
    const none = await rollout({ package: pkg.id, target: { filter: [{ key: "versions.agent", op: "==", val: "none" }] } });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe("VALIDATION_FAILED");
    for (const target of [{}, { deviceIds: [], filter: [] }, { tags: ["x"] }]) {
      const bad = await rollout({ package: pkg.id, target });
      expect(bad.status, JSON.stringify(target)).toBe(400);
      expect(bad.body.code).toBe("VALIDATION_FAILED");
    }
  });

  it("lists which versions the organization's devices run", async () => {
    await devices(3, "0.0.9-count");
    const res = await t.api<AgentVersionCount[]>("GET", "/api/agent-versions", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body.find((v) => v.version === "0.0.9-count")).toEqual({ version: "0.0.9-count", devices: 3, connected: 0 });
  });

  it("tenancy and permissions: another account's package or devices are not found; viewers read but cannot act", async () => {
    const pkg = await uploadTestPackage(t);
    const ids = await devices(1);
    const tenant = await t.createTenant("Rival");
    const theirs = await rollout({ package: pkg.id, target: { filter: [] } }, tenant.token);
    expect(theirs.status).toBe(404);
    const mine = await rollout({ package: pkg.id, target: { deviceIds: ids } });
    expect((await t.api<ErrorBody>("GET", `/api/agent-upgrades/${mine.body.id}`, { token: tenant.token })).status).toBe(404);
    expect((await t.api<ErrorBody>("POST", `/api/agent-upgrades/${mine.body.id}/pause`, { token: tenant.token })).status).toBe(
      404,
    );
    const viewer = await t.addMember("viewer");
    expect((await t.api("GET", `/api/agent-upgrades/${mine.body.id}`, { token: viewer.token })).status).toBe(200);
    expect((await t.api("POST", `/api/agent-upgrades/${mine.body.id}/pause`, { token: viewer.token })).status).toBe(403);
    expect((await rollout({ package: pkg.id, target: { deviceIds: ids } }, viewer.token)).status).toBe(403);
  });
});
