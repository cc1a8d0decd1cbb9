/**
 * Issue 8 (4): API latency with N devices, 2N tunnels and N jobs in the
 * database, on PostgreSQL and on PGlite: 50 keep-alive clients in a load
 * generator (own process) against Tern's server (own process), per endpoint.
 * Baseline: a bare node:http server answering a body of the same size.
 */
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { formatValue } from "../format.ts";
import { fleetSizes } from "../server/connect.ts";
import { type DbTarget, login, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import type { BenchCase, Figure, Params } from "../types.ts";
import { bodyBucket, type HttpStaticParams } from "./http-static.ts";
import { stopAll } from "./util.ts";

export interface ServerApiParams extends Params {
  devices: number;
  db: DbTarget;
  concurrency: number;
  durationMs: number;
}

const FILTER = encodeURIComponent(JSON.stringify([{ key: "name", op: "contains", val: "7" }]));

/** The requests, each a page of 100: devices with a filter and a sort (two sizes), tunnels, jobs, notifications. */
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
    "A scratch database (PostgreSQL, or PGlite: the server's embedded default) is seeded with N devices, 2N tunnels, N " +
    "finished jobs and N notifications through the server's tables; Tern's server runs in its own process, no devices connected. An HTTP load " +
    "generator (own process) runs `concurrency` keep-alive clients, each sending the next request when the previous answer has " +
    "been read, against one endpoint at a time (0.5 s warm-up, then the window): `GET /api/devices` summary and detailed, a " +
    'page of 100 with a filter (name contains "7") and a sort (hostname desc), `GET /api/tunnels`, `GET /api/jobs` and `GET /api/notifications` (pages ' +
    "of 100). p50/p99 per request, send to last byte. Baseline: http-static with the same clients and a body of the same size " +
    "(rounded up to 8 KiB).",
  sizes: (mode) =>
    fleetSizes(mode).flatMap((devices) =>
      (["pg", "pglite"] as const).map((db) => ({ devices, db, concurrency: 50, durationMs: mode === "quick" ? 3000 : 10_000 })),
    ),
  async run(params, ctx) {
    const scratch = await scratchDatabase(params.db, ctx);
    let tern: TernServer | undefined;
    let load: Worker | undefined;
    const results: Record<string, LoadResult> = {};
    const baselines: Record<string, HttpStaticParams> = {};
    try {
      const fleet = await seedScratch(
        scratch,
        { devices: params.devices, configure: false, finishedJobs: true, notifications: true },
        ctx,
      );
      tern = await startTern(fleet, ctx);
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
    } finally {
      await stopAll(load);
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
    return { figures, notes, details: { endpoints: API_ENDPOINTS.map((e) => ({ ...e, ...results[e.key] })) } };
  },
};
