/**
 * Tern's real server (startServer: HTTP API, device gateway, job engine,
 * ingestion) as a benchmark worker. The parent reads its memory and CPU from
 * /proc; the commands here only read counters the server keeps anyway and run
 * small queries for the parent between measurements.
 */
import { getHeapSpaceStatistics } from "node:v8";
import { canonicalJson } from "@tern/protocol";
import { sql } from "kysely";
import { pino } from "pino";
import { loadConfig } from "../../../../apps/server/src/config.ts";
import { type RunningServer, startServer } from "../../../../apps/server/src/server.ts";
import { readDesiredConfig } from "../../../../apps/server/src/services/desired-config-seal.ts";
import { collect, serve } from "./ipc.ts";

let server: RunningServer | null = null;

function need(): RunningServer {
  if (!server) throw new Error("server not started");
  return server;
}

async function value(metric: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> {
  return (await metric.get()).values.reduce((a, v) => a + v.value, 0);
}

serve(
  {
    start: async (args) => {
      const config = loadConfig(args.env as Record<string, string>);
      // The server logs as in production (info), into a file of the run instead of the bench's terminal.
      const logger = pino({ level: config.TERN_LOG_LEVEL }, pino.destination({ dest: String(args.logFile), sync: false }));
      server = await startServer(config, logger);
      return { url: server.url, pid: process.pid };
    },
    stats: async () => {
      const m = need().deps.metrics;
      const ingest = need().gateway.ingest;
      return {
        connected: await value(m.connectedDevices),
        statusIngested: await value(m.statusIngested),
        tunnelSamples: await value(m.tunnelSamples),
        dropped: await value(m.ingestDropped),
        writeFailures: await value(m.ingestWriteFailures),
        admissionRefusals: (await m.wsErrors.get()).values
          .filter((v) => v.labels.kind === "admission")
          .reduce((a, v) => a + v.value, 0),
        buffered: ingest.buffered,
        batches: ingest.recent.slice(-50),
      };
    },
    flush: async () => {
      await need().gateway.ingest.flush();
      return {};
    },
    gc: () => {
      collect();
      const mem = process.memoryUsage();
      // Where the RSS goes: each V8 space's size against what its live objects use, and memory outside the heap.
      const spaces = Object.fromEntries(
        getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
      );
      return {
        rssBytes: mem.rss,
        heapUsedBytes: mem.heapUsed,
        heapTotalBytes: mem.heapTotal,
        externalBytes: mem.external,
        arrayBuffersBytes: mem.arrayBuffers,
        spaces,
      };
    },
    /** Devices the database holds as connected (the gateway's bookkeeping of link ends is done when none is). */
    connectedRows: async () => {
      const row = await need()
        .deps.db.selectFrom("devices")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("connection", "=", "connected")
        .executeTakeFirstOrThrow();
      return { connected: Number(row.n) };
    },
    /** Jobs of one type by state. */
    jobCounts: async (args) => {
      const rows = await need()
        .deps.db.selectFrom("jobs")
        .select(["state", (eb) => eb.fn.countAll<number>().as("n")])
        .where("type", "=", args.type as never)
        .groupBy("state")
        .execute();
      return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
    },
    /** Epoch milliseconds at which each job of a type finished (for per-job latency). */
    jobTimes: async (args) => {
      const rows = await need()
        .deps.db.selectFrom("jobs")
        .select(["created_at", "started_at", "finished_at"])
        .where("type", "=", args.type as never)
        .where("state", "=", "complete")
        .execute();
      return {
        created: rows.map((r) => r.created_at.getTime()),
        started: rows.map((r) => r.started_at?.getTime() ?? Number.NaN),
        finished: rows.map((r) => r.finished_at?.getTime() ?? Number.NaN),
      };
    },
    /** Mean size of an apply's config (the ws-broadcast baseline sends messages of this size). */
    applyBytes: async () => {
      // Configs are sealed at rest: open a sample of them, as the dispatcher does before it sends one.
      const { deps } = need();
      const ids = await deps.db
        .selectFrom("devices")
        .select("id")
        .where("desired_config_enc", "is not", null)
        .limit(50)
        .execute();
      let total = 0;
      for (const { id } of ids) total += Buffer.byteLength(canonicalJson(await readDesiredConfig(deps.db, deps.keyring, id)));
      return { bytes: (ids.length ? Math.round(total / ids.length) : 0) + 120 };
    },
    /**
     * A fleet's state in the database (restart case): devices connected, devices reconciled (applied
     * hash = desired hash), the jobs of a type by state, how many devices have other than one such
     * job, and how many of those jobs went out more than once.
     */
    fleetState: async (args) => {
      const db = need().deps.db;
      const dev = await sql<{ connected: number; reconciled: number }>`select
          count(*) filter (where connection = 'connected')::int as connected,
          count(*) filter (where connection = 'connected' and applied_hash = desired_hash)::int as reconciled
        from devices`.execute(db);
      const jobs = await sql<{ state: string; n: number; resent: number }>`select state, count(*)::int as n,
          count(*) filter (where attempts > 1)::int as resent
        from jobs where type = ${String(args.type)} group by state`.execute(db);
      const perDevice = await sql<{ n: number }>`select count(*)::int as n from (select device_id from jobs
        where type = ${String(args.type)} group by device_id having count(*) <> 1) x`.execute(db);
      return {
        ...dev.rows[0]!,
        jobs: Object.fromEntries(jobs.rows.map((r) => [r.state, r.n])),
        resent: jobs.rows.reduce((a, r) => a + r.resent, 0),
        devicesWithOtherThanOneJob: perDevice.rows[0]!.n,
      };
    },
    samplesInTable: async () => {
      const row = await need()
        .deps.db.selectFrom("tunnel_samples")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return { rows: Number(row.n) };
    },
    stop: async () => {
      await server?.close();
      server = null;
      return {};
    },
  },
  { pid: process.pid },
);
