/**
 * Agent rollouts end to end on the server: the scheduler duty sends each device its package over its websocket
 * (`upgrade-begin`, `upgrade-chunk` in order, `upgrade-install`), the devices' reports in their status
 * (`status.upgrade`) make them upgraded or rolled back, a refusal fails the device with the agent's reason, a
 * failed canary pauses the rollout, and live events follow each device. Each device's upgrade is a job
 * (`upgrade`): listed in the rollout's job group, ended with the device, told (jobs-finished: a "job failed"
 * notification), streamed, left alone by the config job machinery, not deletable while it runs. The devices
 * are protocol-level clients (the agent's side: apps/agent/test/upgrade).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Job, Rollout, RolloutReport, Status, TokenPair } from "@tern/protocol";
import { UPGRADE_CHUNK_BYTES } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { requeueRunningMany, settleJobsByHash, timeOutStaleRunning } from "../../src/jobs/job-store.ts";
import { generateSigningKeys, signatureHeaders, signPackageBytes } from "../support/agent-upgrades.ts";
import { type SimRow, useGatewayServer, waitUntil } from "../support/gateway.ts";
import { TEST_ADMIN } from "../support/onboarding.ts";
import { helloFor, openRawLink, type RawLink } from "../support/raw-link.ts";
import { openSse, type SseEvent } from "../support/sse.ts";

const g = useGatewayServer();

async function adminToken(): Promise<string> {
  const res = await fetch(`${g.server.url}/api/users/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: TEST_ADMIN.email, password: TEST_ADMIN.password }),
  });
  return ((await res.json()) as TokenPair).accessToken;
}

async function call<T>(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${g.server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

function status(fields: Partial<Status> = {}): Status {
  return {
    type: "status",
    at: new Date().toISOString(),
    appliedHash: null,
    applying: false,
    tunnels: [],
    interfaces: [],
    bgp: null,
    vrrp: [],
    health: null,
    ...fields,
  };
}

type Behaviour = "commit" | "roll-back" | "refuse" | "silent";

/**
 * A connected device that takes the package and then reports as `behaviour` says (decided when the package
 * comes, when it is a function; `silent` installs and never reports until the test calls `report`); applies
 * configs it is sent; collects what it received.
 */
async function upgradingDevice(device: SimRow, decide: Behaviour | (() => Behaviour)) {
  let behaviour: Behaviour = typeof decide === "function" ? "commit" : decide;
  const raw: RawLink = await openRawLink(g.server.url, device.token, device);
  raw.send(helloFor(device.machineId));
  await raw.next("welcome");
  const got = {
    begin: null as null | Record<string, unknown>,
    chunks: [] as Buffer[],
    offsets: [] as number[],
    installed: false,
  };
  let upgradeId = "";
  const report = (outcome: "committed" | "rolled-back") =>
    raw.send(
      status({
        upgrade: {
          upgradeId,
          from: "raw-test",
          to: String(got.begin?.version),
          outcome,
          ...(outcome === "rolled-back" ? { detail: "tunnels not up again: t-1" } : {}),
          at: new Date().toISOString(),
        },
      }),
    );
  raw.ws.on("message", (data) => {
    const m = JSON.parse(String(data)) as {
      type: string;
      id: string;
      method: string;
      hash?: string;
      params: Record<string, unknown>;
    };
    if (m.type === "apply")
      return raw.send({ type: "apply-result", id: m.id, ok: true, appliedHash: m.hash, rolledBack: false, drivers: [] });
    if (m.type !== "request") return;
    const ok = (received: number) => raw.send({ type: "response", id: m.id, ok: true, result: { ok: true, received } });
    if (m.method === "upgrade-begin") {
      if (typeof decide === "function") behaviour = decide();
      if (behaviour === "refuse")
        return raw.send({ type: "response", id: m.id, ok: false, error: "INVALID_REQUEST: this agent trusts no upgrade key" });
      got.begin = m.params;
      return ok(0);
    }
    if (m.method === "upgrade-chunk") {
      got.offsets.push(Number(m.params.offset));
      got.chunks.push(Buffer.from(String(m.params.data), "base64"));
      return ok(got.chunks.reduce((n, c) => n + c.length, 0));
    }
    if (m.method === "upgrade-install") {
      got.installed = true;
      ok(got.chunks.reduce((n, c) => n + c.length, 0));
      upgradeId = String(m.params.upgradeId);
      if (behaviour !== "silent") setTimeout(() => report(behaviour === "commit" ? "committed" : "rolled-back"), 100);
    }
  });
  return { id: device.id, raw, got, report };
}

async function uploadPackage(token: string, version: string, bytes: Buffer): Promise<string> {
  const keys = generateSigningKeys();
  expect((await call(token, "POST", "/api/agent-signing-keys", { name: `k-${version}`, publicKey: keys.publicKey })).status).toBe(
    201,
  );
  const res = await call<{ id: string }>(
    token,
    "POST",
    "/api/agent-packages",
    bytes,
    signatureHeaders(signPackageBytes(bytes, version, keys.privateKeyPem)),
  );
  expect(res.status).toBe(201);
  return res.body.id;
}

const settled = (token: string, id: string, done: (r: RolloutReport) => boolean) =>
  waitUntil(
    async () => (await call<RolloutReport>(token, "GET", `/api/agent-upgrades/${id}`)).body,
    done,
    15_000,
    `rollout ${id} to settle`,
  );

describe("agent rollouts over the device link", () => {
  it("sends the package in order to every device; reports make them upgraded or rolled back, a refusal fails one", async () => {
    const token = await adminToken();
    const bytes = randomBytes(UPGRADE_CHUNK_BYTES * 2 + 777);
    const pkg = await uploadPackage(token, "5.0.0", bytes);
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const [a, b, c] = await Promise.all([
      upgradingDevice(devices[0]!, "commit"),
      upgradingDevice(devices[1]!, "roll-back"),
      upgradingDevice(devices[2]!, "refuse"),
    ]);
    const created = await call<Rollout>(token, "POST", "/api/agent-upgrades", {
      package: pkg,
      target: { deviceIds: [a.id, b.id, c.id] },
      canaryPercent: 0,
      batchSize: 3,
      healthTimeoutSec: 60,
    });
    expect(created.status).toBe(201);
    const done = await settled(token, created.body.id, (r) => r.state === "complete");
    const byDevice = Object.fromEntries(done.devices.map((d) => [d.device, d]));
    expect(byDevice[a.id]).toMatchObject({ state: "upgraded", fromVersion: "raw-test", detail: null });
    expect(byDevice[b.id]).toMatchObject({ state: "rolled-back", detail: "tunnels not up again: t-1" });
    expect(byDevice[c.id]!.state).toBe("failed");
    expect(byDevice[c.id]!.detail).toMatch(/the device refused the package: .*trusts no upgrade key/);
    expect(done.counts).toMatchObject({ upgraded: 1, "rolled-back": 1, failed: 1 });
    // What the device got is the package: begin's checksum and signature, chunks in order, the same bytes.
    expect(a.got.begin).toMatchObject({
      version: "5.0.0",
      size: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
    });
    expect(a.got.offsets).toEqual([0, UPGRADE_CHUNK_BYTES, UPGRADE_CHUNK_BYTES * 2]);
    expect(Buffer.concat(a.got.chunks).equals(bytes)).toBe(true);
    expect(a.got.installed).toBe(true);
    // Live events followed each device's progress (the journal the console's stream reads).
    const events = await g.database.db
      .selectFrom("live_events")
      .select("event")
      .where("organization_id", "=", g.org.id)
      .execute();
    const upgrades = events
      .map((e) => e.event as { kind: string; id: string; data?: { device?: string; status?: string } })
      .filter((e) => e.kind === "upgrade" && e.id === created.body.id);
    expect(upgrades.filter((e) => e.data?.device === a.id).map((e) => e.data?.status)).toEqual([
      "pending",
      "sending",
      "installing",
      "upgraded",
    ]);
    // The rollout's own state change (here: complete) is an event too, without a device.
    expect(upgrades.filter((e) => e.data?.device === undefined).map((e) => e.data?.status)).toEqual(["complete"]);
    for (const d of [a, b, c]) d.raw.ws.close();
  });

  it("a canary that rolls back pauses the rollout; the other devices are not sent anything", async () => {
    const token = await adminToken();
    const pkg = await uploadPackage(token, "5.1.0", randomBytes(1000));
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    // Canaries are the first devices in id order: whichever gets the package first is the canary, and rolls back.
    let sent = 0;
    const firstRollsBack = (): Behaviour => (sent++ === 0 ? "roll-back" : "commit");
    const links = await Promise.all(devices.map((d) => upgradingDevice(d, firstRollsBack)));
    const created = await call<Rollout>(token, "POST", "/api/agent-upgrades", {
      package: pkg,
      target: { deviceIds: links.map((l) => l.id) },
      canaryPercent: 33,
      batchSize: 1,
    });
    const paused = await settled(token, created.body.id, (r) => r.state === "paused");
    const canaries = paused.devices.filter((d) => d.canary);
    expect(canaries).toHaveLength(1);
    expect(canaries[0]).toMatchObject({ state: "rolled-back" });
    expect(links.filter((l) => l.got.begin !== null).map((l) => l.id)).toEqual([canaries[0]!.device]);
    expect(paused.devices.filter((d) => !d.canary).every((d) => d.state === "pending")).toBe(true);
    expect(paused.pausedReason).toBe(`canary ${canaries[0]!.name} rolled-back: tunnels not up again: t-1`);
    for (const l of links) l.raw.ws.close();
  });
});

describe("each device's upgrade is a job", () => {
  it("running when sent; complete when committed, failed when rolled back (notified) or overdue (corrected by a late report); told and streamed", async () => {
    const token = await adminToken();
    const sse = await openSse(`${g.server.url}/api/events`, { authorization: `Bearer ${token}` });
    const told: GatewayEventMap["jobs-finished"][] = [];
    const stopListening = g.server.deps.deviceLink.events.on("jobs-finished", (e) => told.push(e));
    /** The job duration metric's upgrade jobs so far, by result. */
    const upgradeDurations = async () => {
      const values = (await g.server.deps.metrics.jobDuration.get()).values.filter(
        (v) => v.metricName === "tern_job_duration_seconds_count" && v.labels.type === "upgrade",
      );
      const of = (result: string) => values.find((v) => v.labels.result === result)?.value ?? 0;
      return { complete: of("complete"), failed: of("failed") };
    };
    const observedBefore = await upgradeDurations();
    const pkg = await uploadPackage(token, "6.0.0", randomBytes(1000));
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const [a, b, c] = await Promise.all([
      upgradingDevice(devices[0]!, "commit"),
      upgradingDevice(devices[1]!, "roll-back"),
      upgradingDevice(devices[2]!, "silent"),
    ]);
    const created = await call<Rollout>(token, "POST", "/api/agent-upgrades", {
      package: pkg,
      target: { deviceIds: [a.id, b.id, c.id] },
      canaryPercent: 0,
      batchSize: 3,
      healthTimeoutSec: 60,
    });
    expect(created.status).toBe(201);
    const rolloutId = created.body.id;
    // The rollout's jobs: its job group is the rollout.
    const groupJobs = async () =>
      Object.fromEntries(
        (await call<Job[]>(token, "GET", `/api/jobs?group=${rolloutId}`)).body.map((j) => [j.device.id, j] as const),
      );
    const jobsOf = await waitUntil(
      groupJobs,
      (js) => js[a.id]?.state === "complete" && js[b.id]?.state === "failed" && c.got.installed,
      15_000,
      "the upgrade jobs of a and b to end",
    );
    for (const d of [a, b, c])
      expect(jobsOf[d.id]).toMatchObject({
        type: "upgrade",
        device: { id: d.id },
        tasks: [{ kind: "upgrade", summary: "upgrade agent raw-test → 6.0.0" }],
        attempts: 1,
        createdBy: TEST_ADMIN.email,
      });
    expect(jobsOf[a.id]).toMatchObject({ state: "complete", error: null, correctedAt: null });
    expect(jobsOf[b.id]).toMatchObject({
      state: "failed",
      error: { reason: "device", message: "tunnels not up again: t-1", drivers: [] },
    });
    const cJob = jobsOf[c.id]!;
    expect(cJob).toMatchObject({ state: "running", error: null, finishedAt: null });
    const rows = await g.database.db
      .selectFrom("agent_rollout_devices")
      .select(["device_id", "job_id", "state"])
      .where("rollout_id", "=", rolloutId)
      .execute();
    expect(Object.fromEntries(rows.map((r) => [r.device_id, r.job_id]))).toEqual({
      [a.id]: jobsOf[a.id]!.id,
      [b.id]: jobsOf[b.id]!.id,
      [c.id]: cJob.id,
    });
    // Listed and read like any job: by type, and one by id.
    const byType = await call<Job[]>(
      token,
      "GET",
      `/api/jobs?filter=${encodeURIComponent(JSON.stringify([{ key: "type", op: "==", val: "upgrade" }]))}&limit=1000`,
    );
    expect(byType.status).toBe(200);
    expect(byType.body.map((j) => j.id)).toEqual(expect.arrayContaining(Object.values(jobsOf).map((j) => j.id)));
    expect(byType.body.every((j) => j.type === "upgrade")).toBe(true);
    expect((await call<Job>(token, "GET", `/api/jobs/${cJob.id}`)).body).toMatchObject({ id: cJob.id, type: "upgrade" });

    // The rolled-back upgrade raised "job failed"; the committed one raised nothing.
    const notifications = (deviceId: string) =>
      g.database.db
        .selectFrom("notifications")
        .select(["details", "resolved"])
        .where("device_id", "=", deviceId)
        .where("event_type", "=", "job-failed")
        .execute();
    const raised = await waitUntil(
      () => notifications(b.id),
      (l) => l.length === 1,
      10_000,
      "job-failed of b",
    );
    expect(raised[0]!.details).toContain("an upgrade job failed on");
    expect(raised[0]!.details).toContain("device: tunnels not up again: t-1");
    expect(await notifications(a.id)).toEqual([]);

    // The config job machinery leaves the running upgrade alone: a config change on c settles its own job only.
    const changeJobs = await g.change(c.id);
    const [change] = await g.waitForJobs(changeJobs, "complete");
    const cNow = async () => (await g.jobs([cJob.id]))[0]!;
    expect(await cNow()).toMatchObject({ type: "upgrade", state: "running" });
    await settleJobsByHash(g.database.db, c.id, change!.target_hash!, change!.target_hash);
    await settleJobsByHash(g.database.db, c.id, "", null);
    await requeueRunningMany(g.database.db, [c.id]);
    const timedOutNow = await timeOutStaleRunning(g.database.db, 0, { reason: "timeout", message: "test", drivers: [] });
    expect(timedOutNow.map((j) => j.id)).not.toContain(cJob.id);
    expect(await cNow()).toMatchObject({ state: "running", error: null, finished_at: null, target_hash: "" });

    // Neither deleted (alone or by filter) while it runs: 409, nothing deleted; the rollout's routes end it.
    const del = await call<{ code: string; error: string }>(token, "DELETE", `/api/jobs/${cJob.id}`);
    expect(del.status).toBe(409);
    expect(del.body.code).toBe("JOB_NOT_CANCELLABLE");
    expect(del.body.error).toContain(`/api/agent-upgrades/${rolloutId}/pause`);
    const delMany = await call<{ code: string }>(token, "DELETE", `/api/jobs?ids=${jobsOf[a.id]!.id},${cJob.id}`);
    expect(delMany.status).toBe(409);
    expect(delMany.body.code).toBe("JOB_NOT_CANCELLABLE");
    expect((await g.jobs([jobsOf[a.id]!.id, cJob.id])).length).toBe(2);

    // Overdue: the scheduler fails the device and its job (`timeout`), which raises "job failed" too.
    await g.database.db
      .updateTable("agent_rollout_devices")
      .set({ deadline_at: new Date(Date.now() - 1000) })
      .where("job_id", "=", cJob.id)
      .execute();
    const timedOut = await waitUntil(cNow, (j) => j.state === "failed", 10_000, "c's job to time out");
    expect(timedOut.error).toEqual({ reason: "timeout", message: "not back healthy on the new version in time", drivers: [] });
    const cRaised = await waitUntil(
      () => notifications(c.id),
      (l) => l.length === 1,
      10_000,
      "job-failed of c",
    );
    expect(cRaised[0]!.details).toContain("timeout: not back healthy");

    // The agent's truthful report after the deadline corrects the job like the device's row.
    c.report("committed");
    const corrected = await waitUntil(cNow, (j) => j.state === "complete", 10_000, "c's job corrected");
    expect(corrected.corrected_at).not.toBeNull();
    expect(corrected.finished_at).toEqual(timedOut.finished_at);
    const done = await settled(token, rolloutId, (r) => r.state === "complete");
    expect(done.counts).toMatchObject({ upgraded: 2, "rolled-back": 1 });

    // Every end was told (jobs-finished: the notification engine, the job metrics).
    // (Other tests' devices may still report: only this rollout's devices count; a and b end in either order.)
    const toldJobs = told
      .filter((e) => [a.id, b.id, c.id].includes(e.deviceId))
      .flatMap((e) => e.jobs.map((j) => ({ device: e.deviceId, ...j })))
      .filter((j) => j.type === "upgrade");
    expect(toldJobs).toHaveLength(4);
    expect(toldJobs).toEqual(
      expect.arrayContaining([
        { device: a.id, id: jobsOf[a.id]!.id, type: "upgrade", state: "complete", error: null, corrected: false },
        { device: b.id, id: jobsOf[b.id]!.id, type: "upgrade", state: "failed", error: jobsOf[b.id]!.error, corrected: false },
      ]),
    );
    expect(toldJobs.filter((j) => j.device === c.id)).toEqual([
      { device: c.id, id: cJob.id, type: "upgrade", state: "failed", error: timedOut.error, corrected: false },
      { device: c.id, id: cJob.id, type: "upgrade", state: "complete", error: null, corrected: true },
    ]);
    stopListening();
    const observed = await upgradeDurations();
    expect({ complete: observed.complete - observedBefore.complete, failed: observed.failed - observedBefore.failed }).toEqual({
      complete: 1,
      failed: 2,
    });

    // The console's stream carried the jobs' states (kind `job`) beside the rollout's progress (kind `upgrade`).
    // Only what the stream must carry is asserted, not every step: a stream drops an event whose id is below
    // one it already sent (two transactions committing out of id order; the console refetches anyway).
    const hint = (e: SseEvent) => e.data as { kind: string; id: string; data?: { status?: string; device?: string } };
    const states = (kind: string, id: string, device?: string) =>
      sse.events
        .map(hint)
        .filter((e) => e.kind === kind && e.id === id && (!device || e.data?.device === device))
        .map((e) => e.data?.status);
    await sse.waitFor((e) => hint(e).kind === "job" && e.data.id === cJob.id && hint(e).data?.status === "complete");
    await sse.waitFor((e) => hint(e).kind === "upgrade" && e.data.id === rolloutId && hint(e).data?.status === "upgraded");
    // A statement that moves several jobs is one event with id "*" (the batch's jobs start together); one job, its id.
    for (const job of Object.values(jobsOf))
      expect([...states("job", job.id), ...states("job", "*")], job.id).toContain("running");
    expect(states("job", cJob.id)).toContain("failed");
    expect(states("upgrade", rolloutId, c.id)).toContain("failed");
    sse.close();

    // A finished upgrade job can be deleted (housekeeping); the rollout keeps the device's outcome.
    expect((await call(token, "DELETE", `/api/jobs/${jobsOf[a.id]!.id}`)).status).toBe(204);
    const report = await call<RolloutReport>(token, "GET", `/api/agent-upgrades/${rolloutId}`);
    expect(report.body.devices.find((d) => d.device === a.id)).toMatchObject({ state: "upgraded" });
    for (const d of [a, b, c]) d.raw.ws.close();
  });

  it("a package that cannot be sent fails the job (`transfer`) with the device's reason; a cancel leaves pending devices without a job", async () => {
    const token = await adminToken();
    const pkg = await uploadPackage(token, "6.1.0", randomBytes(1000));
    const { devices } = await g.fleet(3, { connect: false, queueConfig: false });
    const links = await Promise.all(devices.map((d) => upgradingDevice(d, "refuse")));
    const created = await call<Rollout>(token, "POST", "/api/agent-upgrades", {
      package: pkg,
      target: { deviceIds: links.map((l) => l.id) },
      canaryPercent: 0,
      batchSize: 1,
    });
    const rolloutId = created.body.id;
    const [first] = await waitUntil(
      async () => (await call<Job[]>(token, "GET", `/api/jobs?group=${rolloutId}`)).body,
      (js) => js.length === 1 && js[0]!.state === "failed",
      10_000,
      "the first device's job to fail",
    );
    expect(first!.error?.reason).toBe("transfer");
    expect(first!.error?.message).toMatch(/^the device refused the package: .*trusts no upgrade key/);
    expect((await call<Rollout>(token, "POST", `/api/agent-upgrades/${rolloutId}/cancel`)).body.state).toBe("cancelled");
    const report = await call<RolloutReport>(token, "GET", `/api/agent-upgrades/${rolloutId}`);
    const skipped = report.body.devices.filter((d) => d.state === "skipped").map((d) => d.device);
    const jobRows = await g.database.db
      .selectFrom("agent_rollout_devices")
      .select(["device_id", "job_id"])
      .where("rollout_id", "=", rolloutId)
      .execute();
    // Each started device has its job (the second may have started before the cancel); the skipped ones have none.
    for (const r of jobRows) expect(r.job_id === null).toBe(skipped.includes(r.device_id));
    expect((await call<Job[]>(token, "GET", `/api/jobs?group=${rolloutId}`)).body).toHaveLength(3 - skipped.length);
    for (const l of links) l.raw.ws.close();
  });
});
