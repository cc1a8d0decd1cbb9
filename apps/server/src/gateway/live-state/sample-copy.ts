/**
 * The batched writer's PostgreSQL path: tunnel samples go in with `COPY …
 * FROM STDIN` (text format, through pg-copy-streams) on the writer's own
 * connection, followed at once by the statement of latest values and device
 * states (the same as the Kysely path's). COPY skips building a statement
 * parameter per pass and unpacking it on the server: the bench's pg-ingest
 * baseline measures the difference (docs/bench.md). PGlite keeps the
 * one-statement insert (the rows as one JSON parameter), which its own
 * baseline shows as fast as COPY there.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import copyStreams from "pg-copy-streams";
import { textInSlices } from "./in-slices.ts";
import type { SampleRow } from "./ingest-buffer.ts";

export const SAMPLE_COLUMNS = [
  "tunnel_id",
  "device_id",
  "side",
  "at",
  "up",
  "loss",
  "rtt",
  "jitter",
  "samples",
  "window_ms",
  "sent",
  "received",
] as const;

const { Pool: PgPool } = pg;

const COPY_SAMPLES = `copy tunnel_samples (${SAMPLE_COLUMNS.join(", ")}) from stdin`;

const nullable = (v: number | null) => (v === null ? "\\N" : String(v));

/**
 * COPY's text format: tab-separated, one row per line, `\N` for null. Nothing needs escaping: ids are the
 * device's own tunnel ids (uuids, checked against the link's tunnel map), the side is a or b, and the figures
 * are finite numbers the protocol validated (JSON has no NaN, zod refuses infinities).
 */
export function copyLines(rows: readonly SampleRow[]): string {
  let out = "";
  for (const r of rows) {
    out += `${r.tunnelId}\t${r.deviceId}\t${r.side}\t${r.at.toISOString()}\t${r.up ? "t" : "f"}\t${r.loss}\t${r.rtt}\t${r.jitter}\t${r.samples}\t${nullable(r.windowMs)}\t${nullable(r.sent)}\t${nullable(r.received)}\n`;
  }
  return out;
}

/** The samples in one `COPY … FROM STDIN` on `client` (its own transaction), their lines rendered in slices. */
export async function copySamples(client: pg.PoolClient, samples: readonly SampleRow[]): Promise<void> {
  const stream = client.query(copyStreams.from(COPY_SAMPLES));
  await pipeline(Readable.from(textInSlices(samples, copyLines)), stream);
}

/** The writer's own connection (one), so it never queues behind per-device work in the shared pool. */
export function copyWriterPool(url: string): pg.Pool {
  const pool = new PgPool({ connectionString: url, max: 1, options: "-c jit=off" });
  // An idle connection the server ends makes the pool emit 'error'; the next write opens a new one.
  pool.on("error", () => {});
  return pool;
}
