/**
 * Baseline (c): raw ingestion of tunnel-sample rows, without Tern, on a
 * PostgreSQL server and on PGlite: multi-row INSERT, INSERT … unnest and COPY
 * into a scratch table (created and dropped by the run) in a separate process.
 */
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { INGEST_METHODS } from "../ingest/rows.ts";
import { type BenchCase, type BenchContext, type Measurement, type Params, SkipCase } from "../types.ts";
import { redactUrl, stopAll } from "./util.ts";

export interface IngestParams extends Params {
  rows: number;
  /** Rows per statement / per COPY: what one batched flush of the server would write. */
  batch: number;
}

const LABELS = { insert: "multi-row INSERT", unnest: "INSERT … SELECT unnest(arrays)", copy: "COPY" } as const;

async function measure(target: "pg" | "pglite", params: IngestParams, ctx: BenchContext): Promise<Measurement> {
  let worker: Worker | undefined;
  try {
    worker = spawnWorker(workerPath("ingest"));
    await worker.ready;
    const where =
      target === "pg"
        ? { target, url: ctx.env.databaseUrl }
        : { target, dataDir: await mkdtemp(join(ctx.env.tmpDir, "pglite-")) };
    if (target === "pg") {
      try {
        await worker.call("probe", where, 15_000);
      } catch (err) {
        throw new SkipCase(
          `PostgreSQL at ${redactUrl(ctx.env.databaseUrl)} is not reachable: ${(err as Error).message.split("\n")[0]}`,
        );
      }
    }
    const r = await worker.call<{
      version: string;
      results: Record<string, { rowsPerSec: number; verified: number; ms: number }>;
    }>("run", {
      ...where,
      rows: params.rows,
      batch: params.batch,
    });
    const notes: string[] = [];
    for (const [method, m] of Object.entries(r.results)) {
      if (m.verified !== params.rows) notes.push(`${method}: table holds ${m.verified} rows, expected ${params.rows}`);
    }
    return {
      figures: INGEST_METHODS.map((method) => ({
        key: `${method}-rows-per-sec`,
        label: `${LABELS[method]} rows/s`,
        value: r.results[method]?.rowsPerSec ?? null,
        unit: "rows/s",
        better: "higher" as const,
      })),
      notes,
      details: {
        version: r.version,
        where: target === "pg" ? redactUrl(ctx.env.databaseUrl) : "pglite (file-backed, in the worker process)",
        ...r.results,
      },
    };
  } finally {
    await stopAll(worker);
  }
}

const sizes = (mode: string): IngestParams[] =>
  mode === "quick" ? [{ rows: 100_000, batch: 1000 }] : [{ rows: 1_000_000, batch: 1000 }];

export const pgIngest: BenchCase<IngestParams> = {
  name: "pg-ingest",
  kind: "baseline",
  title: "raw PostgreSQL ingestion of tunnel samples",
  description:
    "Tunnel-sample rows (uuid tunnel and device, timestamp, up, loss, RTT, jitter, probe count; indexed on tunnel and time) loaded " +
    "into a scratch table on the PostgreSQL server of TERN_BENCH_DATABASE_URL (else TERN_TEST_DATABASE_URL, else the dev server) " +
    "in batches, with three methods; rows per second from first to last batch. Skipped when the server is not reachable.",
  sizes,
  run: (params, ctx) => measure("pg", params, ctx),
};

export const pgliteIngest: BenchCase<IngestParams> = {
  name: "pglite-ingest",
  kind: "baseline",
  title: "raw PGlite ingestion of tunnel samples",
  description:
    "The same rows and methods as pg-ingest on PGlite (the server's embedded default) with a file-backed data directory.",
  sizes: (mode) => (mode === "quick" ? [{ rows: 50_000, batch: 1000 }] : [{ rows: 500_000, batch: 1000 }]),
  run: (params, ctx) => measure("pglite", params, ctx),
};
