/**
 * Tiny runs of every baseline with real processes, sockets and databases.
 * They check that measurements are well formed, never how fast anything is.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgIngest, pgliteIngest } from "../../src/bench/cases/ingest.ts";
import { simulatorFootprint } from "../../src/bench/cases/simulator-footprint.ts";
import { wsEchoConnections } from "../../src/bench/cases/ws-echo-connections.ts";
import { wsEchoThroughput } from "../../src/bench/cases/ws-echo-throughput.ts";
import { DEV_DATABASE_URL } from "../../src/bench/main.ts";
import type { BenchContext, Measurement } from "../../src/bench/types.ts";

const databaseUrl = process.env.TERN_TEST_DATABASE_URL || process.env.TERN_BENCH_DATABASE_URL || DEV_DATABASE_URL;

async function reachable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const pgBlocker = await reachable(databaseUrl);
if (pgBlocker !== null) {
  // CI provides a server: there, not reaching it is a failure, not a skip.
  if (process.env.TERN_TEST_DATABASE_URL) throw new Error(`TERN_TEST_DATABASE_URL is set but not reachable: ${pgBlocker}`);
  console.warn(`bench smoke: PostgreSQL ingestion skipped, ${databaseUrl} not reachable: ${pgBlocker}`);
}

let tmpDir: string;
const ctx = (): BenchContext => ({
  mode: "quick",
  env: { databaseUrl, tmpDir },
  log: () => {},
  measure: () => Promise.reject(new Error("smoke tests run cases alone")),
});

beforeAll(async () => {
  tmpDir = await mkdtemp(join(os.tmpdir(), "tern-bench-smoke-"));
});
afterAll(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

function figure(m: Measurement, key: string) {
  const f = m.figures.find((x) => x.key === key);
  if (!f) throw new Error(`no figure ${key}; figures: ${m.figures.map((x) => x.key).join(", ")}`);
  return f;
}

function expectPositive(m: Measurement, ...keys: string[]) {
  for (const key of keys) {
    const v = figure(m, key).value;
    expect(v, key).not.toBeNull();
    expect(Number.isFinite(v), key).toBe(true);
    expect(v!, key).toBeGreaterThan(0);
  }
}

describe("baseline smoke runs", () => {
  it("ws-echo-connections holds every connection and times echoes", async () => {
    const m = await wsEchoConnections.run({ connections: 20, intervalMs: 200, windowMs: 1000 }, ctx());
    expect(figure(m, "connections").value).toBe(20);
    expectPositive(m, "connect-rate", "rss", "latency-p50", "latency-p99");
    expect(figure(m, "latency-p99").value!).toBeGreaterThanOrEqual(figure(m, "latency-p50").value!);
    expect(figure(m, "cpu").value!).toBeGreaterThanOrEqual(0);
    const lat = m.details!.latency as { sent: number; skipped: number; received: number; lost: number; payloadBytes: number };
    // 20 connections × 5 intervals: each slot is sent, or skipped while its previous echo is still out.
    expect(lat.sent + lat.skipped).toBe(100);
    expect(lat.sent).toBeGreaterThan(0);
    expect(lat.received + lat.lost).toBe(lat.sent);
    expect(lat.payloadBytes).toBeGreaterThan(1000);
  }, 60_000);

  it("ws-echo-throughput counts echoed messages with both processes' CPU", async () => {
    const m = await wsEchoThroughput.run({ connections: 2, window: 4, durationMs: 500 }, ctx());
    expectPositive(m, "msg-per-sec", "mib-per-sec", "server-cpu", "loader-cpu");
    expect((m.details as { messages: number }).messages).toBeGreaterThan(0);
  }, 60_000);

  it("pglite-ingest loads and verifies the rows with every method", async () => {
    const m = await pgliteIngest.run({ rows: 3000, batch: 1000 }, ctx());
    expectPositive(m, "insert-rows-per-sec", "unnest-rows-per-sec", "copy-rows-per-sec");
    expect(m.notes).toEqual([]);
    expect(m.details).toMatchObject({ insert: { verified: 3000 }, unnest: { verified: 3000 }, copy: { verified: 3000 } });
  }, 120_000);

  it.runIf(pgBlocker === null)(
    "pg-ingest loads and verifies the rows with every method",
    async () => {
      const m = await pgIngest.run({ rows: 3000, batch: 1000 }, ctx());
      expectPositive(m, "insert-rows-per-sec", "unnest-rows-per-sec", "copy-rows-per-sec");
      expect(m.notes).toEqual([]);
      expect(m.details).toMatchObject({ copy: { verified: 3000 } });
      // The scratch tables are gone afterwards.
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      const left = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'tern_bench_samples_%'");
      await client.end();
      expect(left.rows[0].n).toBe(0);
    },
    120_000,
  );

  it("pg-ingest is skipped, not failed, when the server is not reachable", async () => {
    const closed = { ...ctx(), env: { databaseUrl: "postgres://postgres@127.0.0.1:1/none", tmpDir } };
    await expect(pgIngest.run({ rows: 10, batch: 10 }, closed)).rejects.toMatchObject({
      name: "SkipCase",
      message: expect.stringMatching(/^PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/none is not reachable/),
    });
  }, 60_000);

  it("simulator-footprint connects every device and refers to the bare ws client as its baseline", async () => {
    const m = await simulatorFootprint.run({ devices: 30, tunnels: 4 }, ctx());
    expect(figure(m, "ready").value).toBe(30);
    expectPositive(m, "onboard-rate");
    expect(Number.isFinite(figure(m, "rss-per-device").value)).toBe(true);
    expect(figure(m, "rss-per-device").baseline).toEqual({
      case: "ws-echo-connections",
      params: { connections: 30, intervalMs: 2000, windowMs: 10_000 },
      key: "client-rss-per-connection",
    });
  }, 120_000);
});
