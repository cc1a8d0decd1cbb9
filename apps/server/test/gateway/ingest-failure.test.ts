/**
 * A database that fails or stalls under status ingestion: the links keep
 * working (statuses accepted, jobs dispatched), failures and drops are
 * counted, the buffer stays bounded, and writing resumes afterwards.
 */
import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useGatewayServer, waitUntil } from "../support/gateway.ts";
import { testDatabaseKind } from "../support/test-database.ts";

const MAX_BUFFERED = 40;
const onPostgres = testDatabaseKind() === "postgres";
if (!onPostgres)
  console.warn("ingest-failure.test.ts: the stalled-database case needs a second session (PostgreSQL); skipped on PGlite");
const g = useGatewayServer({ TERN_INGEST_MAX_BUFFERED: String(MAX_BUFFERED), TERN_INGEST_FLUSH_MS: "50" });

const counter = async (name: "ingestWriteFailures" | "ingestDropped" | "statusIngested", labels?: Record<string, string>) => {
  const values = (await g.server.deps.metrics[name].get()).values;
  return values
    .filter((v) => !labels || Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))
    .reduce((n, v) => n + v.value, 0);
};

async function connectedPair() {
  const { fleet, devices } = await g.fleet(2, { statusIntervalMs: 3_600_000 });
  const t = await g.tunnel(devices[0]!, devices[1]!);
  await g.waitForJobs(t.jobIds, "complete");
  await waitUntil(
    () => fleet.device(0).tunnels.length,
    (n) => n === 1,
  );
  return { fleet, devices, tunnel: t.id };
}

describe("ingestion when the database fails", () => {
  it("keeps the link working while writes fail, counts the failures, and writes again afterwards", async () => {
    const { fleet, devices, tunnel } = await connectedPair();
    const sim = fleet.device(0);
    const failuresBefore = await counter("ingestWriteFailures");
    const ingestedBefore = await counter("statusIngested");
    await sql`alter table tunnel_samples rename to tunnel_samples_away`.execute(g.database.db);
    try {
      for (let i = 0; i < 5; i++) sim.sendStatus();
      await waitUntil(
        () => counter("ingestWriteFailures"),
        (n) => n >= failuresBefore + 3,
      );
      expect(await counter("statusIngested")).toBe(ingestedBefore + 5);
      // Jobs still flow over the same link.
      const jobIds = await g.change(devices[0]!.id);
      await g.waitForJobs(jobIds, "complete");
      expect(sim.ready).toBe(true);
    } finally {
      await sql`alter table tunnel_samples_away rename to tunnel_samples`.execute(g.database.db);
    }
    // The batch that failed for its own reason three times was dropped and counted; new samples are written.
    await waitUntil(
      () => counter("ingestDropped", { reason: "write-failed" }),
      (n) => n > 0,
    );
    sim.setTunnelMetrics({ rtt: 77 });
    sim.sendStatus();
    await waitUntil(
      () =>
        g.database.db.selectFrom("tunnel_samples").select("rtt").where("tunnel_id", "=", tunnel).where("rtt", "=", 77).execute(),
      (rows) => rows.length === 1,
    );
  });

  it.runIf(onPostgres)("holds a bounded buffer while the database stalls, dropping and counting the rest", async () => {
    const { fleet, devices, tunnel } = await connectedPair();
    const sim = fleet.device(0);
    const droppedBefore = await counter("ingestDropped", { reason: "buffer-full" });
    // Another session holds the samples table: every flush waits.
    const blocker = new pg.Client({ connectionString: g.database.url });
    await blocker.connect();
    await blocker.query("begin");
    await blocker.query("lock table tunnel_samples in access exclusive mode");
    try {
      for (let i = 0; i < MAX_BUFFERED * 3; i++) sim.sendStatus();
      await waitUntil(
        () => counter("ingestDropped", { reason: "buffer-full" }),
        (n) => n > droppedBefore,
      );
      expect(g.server.gateway.ingest.buffered).toBeLessThanOrEqual(MAX_BUFFERED);
      const jobIds = await g.change(devices[0]!.id);
      await g.waitForJobs(jobIds, "complete");
    } finally {
      await blocker.query("rollback");
      await blocker.end();
    }
    // What the buffer held is written once the table is free; what did not fit was counted above.
    const written = await waitUntil(
      () => g.database.db.selectFrom("tunnel_samples").select("rtt").where("tunnel_id", "=", tunnel).execute(),
      (rows) => rows.length > 0,
    );
    expect(written.length).toBeLessThanOrEqual(MAX_BUFFERED * 2);
    await waitUntil(
      () => g.server.gateway.ingest.buffered,
      (n) => n === 0,
    );
  });

  it.runIf(onPostgres)("writes samples while every connection of the shared pool is busy (the writer has its own)", async () => {
    const { fleet, tunnel } = await connectedPair();
    const sim = fleet.device(0);
    // Occupy every connection of the server's pool (5 in tests) with a statement that sleeps.
    let sleepsDone = false;
    const sleeps = Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(4)`.execute(g.server.deps.db))).finally(() => {
      sleepsDone = true;
    });
    const reader = new pg.Client({ connectionString: g.database.url });
    await reader.connect();
    try {
      await new Promise((r) => setTimeout(r, 200));
      const before = Number(
        (await reader.query("select count(*) from tunnel_samples where tunnel_id = $1", [tunnel])).rows[0].count,
      );
      for (let i = 0; i < 5; i++) sim.sendStatus();
      await waitUntil(
        async () =>
          Number((await reader.query("select count(*) from tunnel_samples where tunnel_id = $1", [tunnel])).rows[0].count),
        (n) => n >= before + 5,
      );
      // The samples are in the table while the shared pool is still taken.
      expect(sleepsDone).toBe(false);
    } finally {
      await reader.end();
      await sleeps;
    }
  });
});
