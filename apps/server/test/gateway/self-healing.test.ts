/**
 * Drift and self-healing: a device whose applied hash is not its desired one,
 * with nothing in flight, gets automatic `sync` jobs, at most
 * TERN_AUTO_SYNC_ATTEMPTS (2) since the last change; then auto-sync pauses
 * and `self-healing-failed` is emitted, until the next admin change.
 */
import { describe, expect, it } from "vitest";
import type { GatewayEventMap } from "../../src/gateway/events.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer();

const deviceRow = (id: string) =>
  g.database.db
    .selectFrom("devices")
    .select(["sync_attempts", "auto_sync_paused", "applied_hash", "desired_hash"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

const jobsOf = (id: string) =>
  g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", id).orderBy("created_at").execute();

describe("drift and self-healing", () => {
  it("re-syncs a device that reports another config than its desired one", async () => {
    const { fleet, devices } = await g.fleet(1);
    const device = devices[0]!;
    const sim = fleet.device(0);
    await waitUntil(
      () => jobsOf(device.id),
      (jobs) => jobs.length === 1 && jobs[0]!.state === "complete",
    );
    const desired = (await deviceRow(device.id)).desired_hash;

    // The router lost its config (reinstalled): its next hello reports none.
    await sim.disconnect();
    sim.appliedHash = null;
    await sim.connect();
    const jobs = await waitUntil(
      () => jobsOf(device.id),
      (j) => j.length === 2 && j[1]!.state === "complete",
    );
    const sync = jobs[1]!;
    expect(sync.type).toBe("sync");
    expect(sync.created_by).toBe("system");
    expect(sync.tasks[0]).toMatchObject({ kind: "auto-sync" });
    expect(sync.target_hash).toBe(desired);
    expect(sim.appliedHash).toBe(desired);
    expect(await deviceRow(device.id)).toMatchObject({ sync_attempts: 1, auto_sync_paused: false, applied_hash: desired });
  });

  it("stops after two automatic attempts, pauses auto-sync and says so; the next change resumes it", async () => {
    const failed: GatewayEventMap["self-healing-failed"][] = [];
    const off = g.server.deps.deviceLink.events.on("self-healing-failed", (e) => failed.push(e));
    const { fleet, devices } = await g.fleet(1, { apply: { failDriver: "ikev2" } });
    const device = devices[0]!;

    const jobs = await waitUntil(
      () => jobsOf(device.id),
      (j) => j.length === 3 && j.every((x) => x.state === "failed"),
    );
    expect(jobs.map((j) => j.type)).toEqual(["modify", "sync", "sync"]);
    for (const j of jobs) expect(j.error).toMatchObject({ reason: "device", message: "ikev2 failed" });
    await waitUntil(
      () => deviceRow(device.id),
      (r) => r.auto_sync_paused,
    );
    expect(await deviceRow(device.id)).toMatchObject({ sync_attempts: 2, auto_sync_paused: true, applied_hash: null });
    await waitUntil(
      () => failed.filter((e) => e.deviceId === device.id),
      (e) => e.length === 1,
    );
    expect(failed.find((e) => e.deviceId === device.id)).toMatchObject({ orgId: g.org.id, attempts: 2, appliedHash: null });

    // Paused: a reconnect does not start another round.
    await fleet.device(0).disconnect();
    await fleet.device(0).connect();
    await new Promise((r) => setTimeout(r, 400));
    expect(await jobsOf(device.id)).toHaveLength(3);

    // An admin change resets the counter; the device is fixed meanwhile.
    fleet.device(0).setApplyBehaviour({ failDriver: null });
    const next = await g.change(device.id);
    await g.waitForJobs(next, "complete");
    expect(await deviceRow(device.id)).toMatchObject({ sync_attempts: 0, auto_sync_paused: false });
    expect(failed.filter((e) => e.deviceId === device.id)).toHaveLength(1);
    off();
  });
});
