/**
 * The job lifecycle against the real server and simulated devices over real
 * websockets: first config, coalescing of changes made while a device
 * applies, offline devices, failed applies with per-driver errors.
 */
import type { SimEvent } from "@tern/test-harness/src/simulator/index.ts";
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer();

describe("job lifecycle", () => {
  it("sends each device its first config as a job; the job completes with the device's applied hash", async () => {
    const { fleet, devices } = await g.fleet(3);
    const jobs = await g.database.db
      .selectFrom("jobs")
      .selectAll()
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    expect(jobs).toHaveLength(3);
    const done = await g.waitForJobs(
      jobs.map((j) => j.id),
      "complete",
    );
    for (const job of done) {
      expect(job.started_at).not.toBeNull();
      expect(job.finished_at).not.toBeNull();
      expect(job.attempts).toBe(1);
      expect(job.error).toBeNull();
      expect(job.sent_hash).toBe(job.target_hash);
    }
    const rows = await g.database.db
      .selectFrom("devices")
      .select(["id", "desired_hash", "applied_hash", "connection", "last_connected_at"])
      .where(
        "id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    for (const row of rows) {
      expect(row.connection).toBe("connected");
      expect(row.last_connected_at).not.toBeNull();
      await waitUntil(
        async () =>
          (await g.database.db.selectFrom("devices").select("applied_hash").where("id", "=", row.id).executeTakeFirstOrThrow())
            .applied_hash,
        (h) => h === row.desired_hash,
      );
    }
    for (const [i, d] of devices.entries()) {
      const desired = rows.find((r) => r.id === d.id)!.desired_hash;
      expect(fleet.device(i).appliedHash).toBe(desired);
    }
  });

  it("coalesces: three changes while a device applies lead to exactly one more apply, and all jobs complete", async () => {
    const { fleet, devices } = await g.fleet(1, { apply: { delayMs: 400 } });
    const device = devices[0]!;
    const sim = fleet.device(0);
    const first = await g.database.db.selectFrom("jobs").select("id").where("device_id", "=", device.id).execute();
    await g.waitForJobs(
      first.map((j) => j.id),
      "complete",
    );

    const applies: SimEvent[] = [];
    fleet.on((e) => {
      if (e.type === "apply" && e.device === 0) applies.push(e);
    });
    // One change starts an apply that takes 400 ms; three more arrive while it runs.
    const a = await g.change(device.id);
    await sim.waitFor("apply", { timeoutMs: 5000 });
    const b = await g.change(device.id);
    const c = await g.change(device.id);
    const d = await g.change(device.id);
    const all = [...a, ...b, ...c, ...d];
    const done = await g.waitForJobs(all, "complete");
    expect(applies).toHaveLength(2);
    // The second apply carried the newest config: the last change's target.
    const last = done.find((j) => j.id === d[0])!;
    expect(applies[1]!.hash).toBe(last.target_hash);
    const secondApply = done.filter((j) => [b[0], c[0], d[0]].includes(j.id));
    expect(new Set(secondApply.map((j) => j.apply_id)).size).toBe(1);
    expect(secondApply.every((j) => j.sent_hash === last.target_hash)).toBe(true);
    expect(sim.appliedHash).toBe(last.target_hash);
  });

  it("keeps jobs of an offline device queued and sends them when it connects", async () => {
    const { fleet, devices } = await g.fleet(1, { connect: false });
    const device = devices[0]!;
    const first = await g.database.db.selectFrom("jobs").select("id").where("device_id", "=", device.id).execute();
    const more = await g.change(device.id);
    const ids = [...first.map((j) => j.id), ...more];
    await new Promise((r) => setTimeout(r, 300));
    expect((await g.jobs(ids)).map((j) => j.state)).toEqual(["queued", "queued"]);

    await fleet.connectAll();
    const done = await g.waitForJobs(ids, "complete");
    // Both went out in one apply (the newest config satisfies the older job).
    expect(new Set(done.map((j) => j.apply_id)).size).toBe(1);

    // Offline again: a new change waits, and goes out on the reconnect.
    await fleet.device(0).disconnect();
    await waitUntil(
      () => g.database.db.selectFrom("devices").select("connection").where("id", "=", device.id).executeTakeFirstOrThrow(),
      (r) => r.connection === "disconnected",
    );
    const later = await g.change(device.id);
    await new Promise((r) => setTimeout(r, 300));
    expect((await g.jobs(later))[0]!.state).toBe("queued");
    await fleet.device(0).connect();
    await g.waitForJobs(later, "complete");
  });

  it("fails a job with the device's per-driver errors and keeps the previous applied hash", async () => {
    const { fleet, devices } = await g.fleet(1, { apply: { failDriver: null } });
    const device = devices[0]!;
    const first = await g.database.db.selectFrom("jobs").select("id").where("device_id", "=", device.id).execute();
    await g.waitForJobs(
      first.map((j) => j.id),
      "complete",
    );
    const good = fleet.device(0).appliedHash;

    fleet.device(0).setApplyBehaviour({ failDriver: "bgp" });
    const [jobId] = await g.change(device.id);
    const [job] = await g.waitForJobs([jobId!], "failed");
    expect(job!.error).toMatchObject({ reason: "device", message: "bgp failed" });
    const drivers = job!.error!.drivers;
    expect(drivers.map((d) => d.driver)).toEqual(["links", "firewall", "ikev2", "bgp"]);
    expect(drivers.find((d) => d.driver === "bgp")).toMatchObject({ ok: false, error: "bgp: simulated failure" });
    expect(drivers.filter((d) => d.driver !== "bgp").every((d) => d.ok)).toBe(true);

    expect(fleet.device(0).appliedHash).toBe(good);
    const row = await g.database.db
      .selectFrom("devices")
      .select(["applied_hash", "desired_hash"])
      .where("id", "=", device.id)
      .executeTakeFirstOrThrow();
    expect(row.applied_hash).toBe(good);
    expect(row.desired_hash).not.toBe(good);
  });

  it("settles the results of many devices answering at once (one batch), each by its own outcome", async () => {
    const { fleet, devices } = await g.fleet(12, { apply: { delayMs: 150 } });
    const first = await g.database.db
      .selectFrom("jobs")
      .select("id")
      .where(
        "device_id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    await g.waitForJobs(
      first.map((j) => j.id),
      "complete",
    );
    const good = devices.map((_, i) => fleet.device(i).appliedHash);
    const failing = new Set([3, 7]);
    for (const i of failing) fleet.device(i).setApplyBehaviour({ failDriver: "bgp" });
    // Every device gets a change; their 150 ms applies end together, so the results arrive at once.
    const jobIds = await Promise.all(devices.map(async (d) => (await g.change(d.id))[0]!));
    const ok = await g.waitForJobs(
      jobIds.filter((_, i) => !failing.has(i)),
      "complete",
    );
    const failed = await g.waitForJobs(
      jobIds.filter((_, i) => failing.has(i)),
      "failed",
    );
    expect(ok).toHaveLength(10);
    for (const job of failed) expect(job.error).toMatchObject({ reason: "device", message: "bgp failed" });
    const rows = await g.database.db
      .selectFrom("devices")
      .select(["id", "applied_hash", "desired_hash"])
      .where(
        "id",
        "in",
        devices.map((d) => d.id),
      )
      .execute();
    for (const [i, d] of devices.entries()) {
      const row = rows.find((r) => r.id === d.id)!;
      if (failing.has(i)) {
        expect(row.applied_hash).toBe(good[i]);
        expect(row.desired_hash).not.toBe(good[i]);
      } else {
        expect(row.applied_hash).toBe(row.desired_hash);
        expect(fleet.device(i).appliedHash).toBe(row.desired_hash);
      }
    }
  });
});
