/**
 * Issue 8 (4): API latency with N devices, 2N tunnels, N jobs and N
 * notifications in the database, on PostgreSQL and on PGlite, while the N
 * devices are connected and report (issue 14: "as in production"): 50
 * keep-alive clients in a load generator (own process) against Tern's server
 * (own process), per endpoint. Baseline: a bare node:http server answering a
 * body of the same size.
 */
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { formatValue } from "../format.ts";
import { fleetSizes, rampFleet, startLoadWorkers } from "../server/connect.ts";
import { type DbTarget, login, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import type { BenchCase, Figure, Params } from "../types.ts";
import { bodyBucket, type HttpStaticParams } from "./http-static.ts";
import { sleep, stopAll } from "./util.ts";
import { echoConnectionsParams } from "./ws-echo-connections.ts";

export interface ServerApiParams extends Params {
  devices: number;
  db: DbTarget;
  concurrency: number;
  durationMs: number;
  /** Every connected device sends a status (4 tunnel samples) once per interval while the lists are measured. */
  intervalMs: number;
}

const FILTER = encodeURIComponent(JSON.stringify([{ key: "name", op: "contains", val: "7" }]));

/** The requests, each a page of 100: devices with a filter and a sort (two sizes), tunnels (in order and by status), jobs, notifications. */
export const API_ENDPOINTS = [
  {
    key: "devices-summary",
    label: "GET /api/devices summary",
    path: `/api/devices?response=summary&limit=100&filter=${FILTER}&sort=hostname&order=desc`,
  },
  {
    key: "devices-detailed",
    label: "GET /api/devices detailed",
    path: `/api/devices?response=detailed&limit=100&filter=${FILTER}&sort=hostname&order=desc`,
  },
  { key: "tunnels", label: "GET /api/tunnels", path: "/api/tunnels?limit=100" },
  // Sorted on the derived status (the console's status column): every tunnel's facts are read, not a page's.
  { key: "tunnels-by-status", label: "GET /api/tunnels by status", path: "/api/tunnels?limit=100&sort=status&order=desc" },
  { key: "jobs", label: "GET /api/jobs", path: "/api/jobs?limit=100" },
  { key: "notifications", label: "GET /api/notifications", path: "/api/notifications?limit=100" },
] as const;

interface LoadResult {
  requests: number;
  perSec: number;
  errors: number;
  firstError: string | null;
  statuses: Record<string, number>;
  bodyBytes: number;
  recordsTotal: string | null;
  /** NaN (null once through the worker's IPC) when no request completed in the window. */
  p50: number | null;
  p99: number | null;
}

export const serverApi: BenchCase<ServerApiParams> = {
  name: "server-api",
  kind: "server",
  title: "Tern API latency under 50 concurrent clients",
  description:
    "A scratch database (PostgreSQL, or PGlite: the server's embedded default) is seeded with N devices, 2N tunnels, their " +
    "first configs as queued jobs and N notifications through the server's tables; Tern's server runs in its own process. The " +
    "fleet comes online first (simulated devices in their own process; online = every first job complete, so the jobs list " +
    "holds N finished jobs) and keeps reporting while the lists are measured: a status with 4 tunnel samples from every " +
    "device once per interval (ws-echo-connections' interval: 10 s, 2 s in quick mode); the statuses the server ingested " +
    "during the measurement are counted and a note says when they fall short of the fleet's rate. An HTTP load " +
    "generator (own process) runs `concurrency` keep-alive clients, each sending the next request when the previous answer has " +
    "been read, against one endpoint at a time (0.5 s warm-up, then the window): `GET /api/devices` summary and detailed, a " +
    'page of 100 with a filter (name contains "7") and a sort (hostname desc), `GET /api/tunnels` (in order, and sorted by status, desc), `GET /api/jobs` and `GET /api/notifications` (pages ' +
    "of 100). p50/p99 per request, send to last byte. Baseline: http-static with the same clients and a body of the same size " +
    "(rounded up to 8 KiB).",
  sizes: (mode) =>
    fleetSizes(mode).flatMap((devices) =>
      (["pg", "pglite"] as const).map((db) => ({
        devices,
        db,
        concurrency: 50,
        durationMs: mode === "quick" ? 3000 : 10_000,
        intervalMs: echoConnectionsParams(mode, devices).intervalMs,
      })),
    ),
  async run(params, ctx) {
    const scratch = await scratchDatabase(params.db, ctx);
    let tern: TernServer | undefined;
    let load: Worker | undefined;
    let workers: Awaited<ReturnType<typeof startLoadWorkers>> | undefined;
    let reporting: { statuses: number; windowMs: number; perSec: number; expectedPerSec: number } | undefined;
    const results: Record<string, LoadResult> = {};
    const baselines: Record<string, HttpStaticParams> = {};
    try {
      const fleet = await seedScratch(scratch, { devices: params.devices, configure: true, notifications: true }, ctx);
      tern = await startTern(fleet, ctx);
      workers = await startLoadWorkers();
      const ramp = await rampFleet(fleet, tern, workers, { from: 0, probes: 0, statusIntervalMs: params.intervalMs }, ctx);
      if (ramp.failed > 0) throw new Error(`${ramp.failed} devices failed to connect: ${ramp.firstError}`);
      ctx.log(
        `  ${params.devices} devices online in ${(ramp.onlineMs / 1000).toFixed(1)} s, reporting every ${params.intervalMs} ms`,
      );
      // One whole interval, so every device has reported (a link's state is made at its first status).
      await sleep(params.intervalMs);
      const ingested = async () => (await tern!.worker.call<{ statusIngested: number }>("stats")).statusIngested;
      const s0 = await ingested();
      const t0 = performance.now();
      const token = await login(tern.url);
      load = spawnWorker(workerPath("http-load"));
      await load.ready;
      const headers = { authorization: `Bearer ${token}` };
      for (const e of API_ENDPOINTS) {
        const url = `${tern.url}${e.path}`;
        const probe = await load.call<{ status: number; bytes: number; total: string | null }>("probe", { url, headers });
        if (probe.status !== 200) throw new Error(`${e.label}: HTTP ${probe.status}`);
        const r = await load.call<LoadResult>(
          "run",
          { url, headers, concurrency: params.concurrency, durationMs: params.durationMs },
          300_000,
        );
        results[e.key] = r;
        baselines[e.key] = {
          bytes: bodyBucket(r.bodyBytes || probe.bytes),
          concurrency: params.concurrency,
          durationMs: params.durationMs,
        };
        ctx.log(
          `  ${e.label}: ${r.requests} requests, p50 ${formatValue(r.p50, "ms")}, p99 ${formatValue(r.p99, "ms")}, ${r.perSec.toFixed(0)} req/s, ${r.bodyBytes} bytes, total ${r.recordsTotal}`,
        );
      }
      const windowMs = performance.now() - t0;
      const statuses = (await ingested()) - s0;
      reporting = {
        statuses,
        windowMs,
        perSec: statuses / (windowMs / 1000),
        expectedPerSec: params.devices / (params.intervalMs / 1000),
      };
      ctx.log(
        `  the server ingested ${reporting.perSec.toFixed(0)} statuses/s during the lists (${reporting.expectedPerSec.toFixed(0)}/s sent)`,
      );
    } finally {
      await workers?.sim.call("stop", {}, 60_000).catch(() => undefined);
      await stopAll(load, workers?.sim, workers?.probes);
      await tern?.stop();
      await scratch.drop();
    }
    const figures: Figure[] = [];
    const notes: string[] = [];
    for (const e of API_ENDPOINTS) {
      const r = results[e.key]!;
      const ref = (key: string) => ({ case: "http-static", params: baselines[e.key]!, key });
      const p50 = r.p50 ?? Number.NaN;
      const p99 = r.p99 ?? Number.NaN;
      figures.push(
        { key: `${e.key}-p50`, label: `${e.label} p50`, value: p50, unit: "ms", better: "lower", baseline: ref("latency-p50") },
        { key: `${e.key}-p99`, label: `${e.label} p99`, value: p99, unit: "ms", better: "lower", baseline: ref("latency-p99") },
        {
          key: `${e.key}-rps`,
          label: `${e.label} requests/s`,
          value: r.perSec,
          unit: "req/s",
          better: "higher",
          baseline: ref("requests-per-sec"),
        },
      );
      if (r.requests === 0) notes.push(`${e.label}: no request completed within ${params.durationMs} ms`);
      const bad = Object.entries(r.statuses).filter(([s]) => s !== "200");
      if (r.errors > 0 || bad.length > 0)
        notes.push(`${e.label}: ${r.errors} failed requests, statuses ${JSON.stringify(r.statuses)}`);
    }
    if (reporting)
      figures.push({
        key: "statuses-ingested-rate",
        label: `statuses ingested per second during the lists (the fleet sends ${reporting.expectedPerSec.toFixed(0)})`,
        value: reporting.perSec,
        unit: "msg/s",
        better: "higher",
      });
    // The simulator spreads each device's statuses over the interval: a fleet ingested at under 90 % of its rate
    // was not reporting as production does (the server fell behind, or devices dropped).
    if (reporting && reporting.perSec < 0.9 * reporting.expectedPerSec)
      notes.push(
        `the fleet's statuses were ingested at ${reporting.perSec.toFixed(0)}/s during the lists, under 90 % of the ${reporting.expectedPerSec.toFixed(0)}/s sent`,
      );
    return { figures, notes, details: { reporting, endpoints: API_ENDPOINTS.map((e) => ({ ...e, ...results[e.key] })) } };
  },
};
