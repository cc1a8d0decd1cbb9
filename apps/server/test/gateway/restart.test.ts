/**
 * Jobs survive the server: stop it while applies are in flight, start a new
 * one on the same database, and the jobs complete (re-sent, or reconciled by
 * the hash the devices report when they reconnect). Also the state a crashed
 * instance leaves behind (a session of a dead instance, a job still running).
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";

const g = useGatewayServer();

describe("server restart with jobs in flight", () => {
  it("completes the jobs after a restart", async () => {
    const { fleet, devices } = await g.fleet(3, { apply: { delayMs: 1500 } });
    const ids = (
      await g.database.db
        .selectFrom("jobs")
        .select("id")
        .where(
          "device_id",
          "in",
          devices.map((d) => d.id),
        )
        .execute()
    ).map((j) => j.id);
    await g.waitForJobs(ids, "running");
    const before = g.server.gateway.instanceId;

    await g.restart();
    expect(g.server.gateway.instanceId).not.toBe(before);
    const done = await g.waitForJobs(ids, "complete", 20_000);
    for (const job of done) expect(job.error).toBeNull();
    await waitUntil(
      () => fleet.stats().ready,
      (n) => n === 3,
    );
    for (const [i, d] of devices.entries()) {
      const row = await g.database.db
        .selectFrom("devices")
        .select(["desired_hash", "connection"])
        .where("id", "=", d.id)
        .executeTakeFirstOrThrow();
      expect(row.connection).toBe("connected");
      expect(fleet.device(i).appliedHash).toBe(row.desired_hash);
    }
    // The old instance left the cluster cleanly.
    const instances = await g.database.db.selectFrom("gateway_instances").select("id").execute();
    expect(instances.map((i) => i.id)).toEqual([g.server.gateway.instanceId]);
  });

  it("takes over what a crashed instance left: its session, and a job still marked running", async () => {
    const { fleet, devices } = await g.fleet(1, { connect: false });
    const device = devices[0]!;
    const [job] = await g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", device.id).execute();
    // A dead instance held the link and had sent the job: written in one transaction, so the stale-link duty (every
    // second) sees all of it or none (it once ran between the device's row and the job's, and requeued nothing).
    const dead = randomUUID();
    await g.database.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("gateway_instances")
        .values({ id: dead, hostname: "gone", pid: 1, heartbeat_at: new Date(Date.now() - 3_600_000) })
        .execute();
      await trx
        .insertInto("device_sessions")
        .values({ device_id: device.id, session_id: randomUUID(), instance_id: dead })
        .execute();
      await trx.updateTable("devices").set({ connection: "connected" }).where("id", "=", device.id).execute();
      await trx
        .updateTable("jobs")
        .set({ state: "running", apply_id: "apply-of-a-dead-instance", sent_hash: job!.target_hash, started_at: sql`now()` })
        .where("id", "=", job!.id)
        .execute();
    });

    // The stale-link duty ends the dead instance's link and puts the job back in the queue.
    await waitUntil(
      () => g.database.db.selectFrom("devices").select("connection").where("id", "=", device.id).executeTakeFirstOrThrow(),
      (r) => r.connection === "disconnected",
    );
    expect((await g.jobs([job!.id]))[0]).toMatchObject({ state: "queued", apply_id: null });
    expect(await g.database.db.selectFrom("gateway_instances").select("id").where("id", "=", dead).execute()).toHaveLength(0);

    await fleet.connectAll();
    const [done] = await g.waitForJobs([job!.id], "complete");
    expect(done!.attempts).toBe(1);
  });

  it("re-sends, on reconnect, a job left running by an earlier link", async () => {
    const { fleet, devices } = await g.fleet(1, { connect: false });
    const device = devices[0]!;
    const [job] = await g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", device.id).execute();
    await g.database.db
      .updateTable("jobs")
      .set({ state: "running", apply_id: "apply-of-an-earlier-link", sent_hash: job!.target_hash, started_at: sql`now()` })
      .where("id", "=", job!.id)
      .execute();
    await fleet.connectAll();
    const [done] = await g.waitForJobs([job!.id], "complete");
    expect(done!.apply_id).not.toBe("apply-of-an-earlier-link");
  });

  it("fails, by the time-out duty, a running job nobody answers for", async () => {
    const { devices } = await g.fleet(1, { connect: false });
    const [job] = await g.database.db.selectFrom("jobs").selectAll().where("device_id", "=", devices[0]!.id).execute();
    await g.database.db
      .updateTable("jobs")
      .set({ state: "running", apply_id: "orphan", sent_hash: job!.target_hash, started_at: new Date(Date.now() - 3_600_000) })
      .where("id", "=", job!.id)
      .execute();
    const [failed] = await g.waitForJobs([job!.id], "failed");
    expect(failed!.error).toMatchObject({ reason: "timeout" });
  });
});
