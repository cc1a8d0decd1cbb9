/**
 * Hellos of devices arriving together share transactions (gateway/hello-batch.ts, issue 14): a
 * fleet connecting at once is recorded in far fewer statements than ten per device, with the same
 * outcome as one at a time: every device connected with a session of this instance, its first
 * config sent and its job complete, applied = desired. Devices whose approval is withdrawn or whose
 * row is held by another transaction are handled on their own, without failing the batch.
 */
import type { JobType } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { insertTestJob } from "../support/device-fixtures.ts";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const g = useGatewayServer();

/** The server's hello transactions and the hellos they recorded so far (`tern_hello_batch_size`). */
async function helloBatches(): Promise<{ transactions: number; hellos: number }> {
  const { values } = await g.server.deps.metrics.helloBatchSize.get();
  const of = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
  return { transactions: of("tern_hello_batch_size_count"), hellos: of("tern_hello_batch_size_sum") };
}

describe("batched hellos", () => {
  it("a fleet connecting at once: every device welcomed, sessions of this instance, first job complete, applied = desired", async () => {
    const n = 40;
    const { fleet, devices } = await g.fleet(n, { concurrency: n, connect: false });
    const before = await helloBatches();
    await fleet.connectAll();
    const ids = devices.map((d) => d.id);
    const jobs = await g.database.db.selectFrom("jobs").select("id").where("device_id", "in", ids).execute();
    expect(jobs).toHaveLength(n);
    const done = await g.waitForJobs(
      jobs.map((j) => j.id),
      "complete",
      30_000,
    );
    for (const j of done) {
      expect(j.error).toBeNull();
      // Sent once: the first apply left from the hello's transaction, not again by a dispatch after it.
      expect(j.attempts).toBe(1);
    }
    await waitUntil(
      () => fleet.stats().ready,
      (r) => r === n,
    );
    const rows = await g.database.db
      .selectFrom("devices")
      .leftJoin("device_sessions", "device_sessions.device_id", "devices.id")
      .select(["devices.connection", "devices.applied_hash", "devices.desired_hash", "device_sessions.instance_id"])
      .where("devices.id", "in", ids)
      .execute();
    expect(rows).toHaveLength(n);
    for (const r of rows) {
      expect(r.connection).toBe("connected");
      expect(r.instance_id).toBe(g.server.gateway.instanceId);
      expect(r.applied_hash).toBe(r.desired_hash);
    }
    expect(g.server.gateway.linkCount).toBe(n);
    // Every hello recorded once. On PostgreSQL in transactions of several (one group commit, one transaction at a
    // time): the hellos arriving while one runs go in the next. PGlite's one connection also serves the upgrades'
    // look-ups, so there the hellos of this small fleet arrive one by one and each has its own.
    const after = await helloBatches();
    expect(after.hellos - before.hellos).toBe(n);
    if (testDatabaseKind() === "postgres") expect(after.transactions - before.transactions).toBeLessThanOrEqual(n / 2);
  });

  it("a device already running its desired config reconnects without any job or apply", async () => {
    const { fleet, devices } = await g.fleet(3);
    const ids = devices.map((d) => d.id);
    const first = await g.database.db.selectFrom("jobs").select("id").where("device_id", "in", ids).execute();
    await g.waitForJobs(
      first.map((j) => j.id),
      "complete",
    );
    const applied = fleet.device(0).appliedHash;
    await g.restart();
    await waitUntil(
      () => fleet.stats().ready,
      (r) => r === 3,
      20_000,
    );
    // Reconciled by its hello: nothing new queued or sent, same hash.
    const jobs = await g.database.db
      .selectFrom("jobs")
      .select(["id", "state", "attempts"])
      .where("device_id", "in", ids)
      .execute();
    expect(jobs).toHaveLength(3);
    for (const j of jobs) expect(j).toMatchObject({ state: "complete", attempts: 1 });
    expect(fleet.device(0).appliedHash).toBe(applied);
  });

  it("a device whose approval is withdrawn is refused while the others of the batch are welcomed", async () => {
    const { fleet, devices } = await g.fleet(6, { connect: false, concurrency: 6 });
    await g.database.db.updateTable("devices").set({ is_approved: false }).where("id", "=", devices[2]!.id).execute();
    void fleet.connectAll().catch(() => undefined);
    await waitUntil(
      () => fleet.stats().ready,
      (r) => r === 5,
      20_000,
    );
    const refused = await g.database.db
      .selectFrom("devices")
      .select("connection")
      .where("id", "=", devices[2]!.id)
      .executeTakeFirstOrThrow();
    expect(refused.connection).not.toBe("connected");
    expect(
      await g.database.db.selectFrom("device_sessions").select("device_id").where("device_id", "=", devices[2]!.id).execute(),
    ).toEqual([]);
    await fleet.stop();
  });

  it("devices without a desired config connecting together: their queued config jobs fail as no-config, one device's each", async () => {
    const { fleet, devices } = await g.fleet(4, { queueConfig: false, connect: false, concurrency: 4 });
    const queue = (deviceId: string, type: JobType) =>
      insertTestJob({ database: g.database, admin: { orgId: g.org.id } }, deviceId, { type });
    const [a, b, stopped, other] = devices.map((d) => d.id) as [string, string, string, string];
    const failing = [await queue(a, "modify"), await queue(a, "sync"), await queue(b, "modify")];
    // Kept: a remote action (not a config job), and the config job of a device whose data plane is stopped.
    const kept = [await queue(other, "restart-agent"), await queue(stopped, "modify")];
    await g.database.db.updateTable("devices").set({ data_plane: "stopped" }).where("id", "=", stopped).execute();
    await fleet.connectAll();
    const failed = await g.waitForJobs(failing, "failed");
    for (const j of failed)
      expect(j.error).toMatchObject({ reason: "no-config", message: "the device has no desired config to send" });
    expect(new Map(failed.map((j) => [j.id, j.device_id]))).toEqual(
      new Map([
        [failing[0], a],
        [failing[1], a],
        [failing[2], b],
      ]),
    );
    expect((await g.jobs(kept)).map((j) => j.state)).toEqual(["queued", "queued"]);
    await fleet.stop();
  });

  // PGlite has one connection: a transaction held open there would hold up the server entirely.
  it.runIf(testDatabaseKind() === "postgres")(
    "a device whose row another transaction holds is welcomed once it is released; the others do not wait",
    async () => {
      const { fleet, devices } = await g.fleet(4, { connect: false, concurrency: 4 });
      const held = devices[1]!;
      const pool = g.database.db;
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      const holding = pool.transaction().execute(async (trx) => {
        await trx.selectFrom("devices").select("id").where("id", "=", held.id).forUpdate().execute();
        await released;
      });
      void fleet.connectAll().catch(() => undefined);
      await waitUntil(
        () => fleet.stats().ready,
        (r) => r === 3,
        20_000,
      );
      expect(fleet.device(1).ready).toBe(false);
      release();
      await holding;
      await waitUntil(
        () => fleet.stats().ready,
        (r) => r === 4,
        20_000,
      );
      await fleet.stop();
    },
  );
});
