/**
 * Ingestion baseline worker: loads the same tunnel-sample rows into a scratch
 * table with each method in turn and times it. Row generation is not timed;
 * each method starts from an empty table with its index.
 */
import { randomBytes } from "node:crypto";
import { createTableSql, INGEST_METHODS, type IngestMethod, sampleRows } from "../ingest/rows.ts";
import { connectPostgres, type IngestTarget, openPglite } from "../ingest/targets.ts";
import { serve } from "./ipc.ts";

async function open(args: Record<string, unknown>): Promise<IngestTarget> {
  return args.target === "pglite" ? openPglite(String(args.dataDir)) : connectPostgres(String(args.url));
}

async function probe(args: Record<string, unknown>) {
  const target = await open(args);
  try {
    return { version: await target.version() };
  } finally {
    await target.close();
  }
}

async function run(args: Record<string, unknown>) {
  const total = Number(args.rows);
  const batch = Number(args.batch);
  const methods = (args.methods as IngestMethod[] | undefined) ?? INGEST_METHODS;
  const rows = sampleRows(total);
  const target = await open(args);
  const results: Record<string, { rows: number; ms: number; rowsPerSec: number; verified: number }> = {};
  try {
    const version = await target.version();
    for (const method of methods) {
      const table = `tern_bench_samples_${method}_${randomBytes(4).toString("hex")}`;
      await target.exec(createTableSql(table));
      try {
        const t0 = process.hrtime.bigint();
        for (let start = 0; start < total; start += batch)
          await target[method](table, rows, start, Math.min(total, start + batch));
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        results[method] = { rows: total, ms, rowsPerSec: total / (ms / 1000), verified: await target.count(table) };
      } finally {
        await target.exec(`DROP TABLE IF EXISTS ${table}`);
      }
    }
    return { version, results };
  } finally {
    await target.close();
  }
}

serve({ probe, run }, { pid: process.pid });
