/**
 * Tiny runs of the server cases against Tern's real server (child process,
 * scratch PostgreSQL database, PGlite for the API case) with real simulated
 * devices and raw device links. They check that the measurements are well
 * formed and that the load really went through the server (devices online,
 * jobs complete, samples in the table), never how fast anything is.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceApprove } from "../../src/bench/cases/device-approve.ts";
import { httpStatic } from "../../src/bench/cases/http-static.ts";
import { serverApi } from "../../src/bench/cases/server-api.ts";
import { serverDevices } from "../../src/bench/cases/server-devices.ts";
import { serverFanout } from "../../src/bench/cases/server-fanout.ts";
import { serverIngest } from "../../src/bench/cases/server-ingest.ts";
import { serverRestart } from "../../src/bench/cases/server-restart.ts";
import { wsBroadcast } from "../../src/bench/cases/ws-broadcast.ts";
import type { BenchContext, Measurement } from "../../src/bench/types.ts";
import { benchDatabaseBlocker, benchDatabaseUrl } from "./support/database.ts";

const databaseUrl = benchDatabaseUrl;
const pgBlocker = await benchDatabaseBlocker("bench server smoke");

let tmpDir: string;
const measured: string[] = [];
const ctx = (): BenchContext => ({
  mode: "quick",
  env: { databaseUrl, tmpDir },
  log: () => {},
  // Baselines are not run here: the cases only ask for them.
  measure: async (name) => {
    measured.push(name);
    return { figures: [] };
  },
});

beforeAll(async () => {
  tmpDir = await mkdtemp(join(os.tmpdir(), "tern-bench-server-smoke-"));
});
afterAll(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

function value(m: Measurement, key: string): number {
  const f = m.figures.find((x) => x.key === key);
  if (!f) throw new Error(`no figure ${key}; figures: ${m.figures.map((x) => x.key).join(", ")}`);
  expect(f.baseline, `${key} has a same-run baseline`).toBeDefined();
  expect(f.value, key).not.toBeNull();
  return f.value!;
}

async function scratchDatabasesLeft(): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query("SELECT count(*)::int AS n FROM pg_database WHERE datname LIKE 'tern_bench_%'");
    return r.rows[0].n as number;
  } finally {
    await client.end();
  }
}

describe.runIf(pgBlocker === null)("server case smoke runs", () => {
  it("server-devices brings every device online and times probe statuses", async () => {
    const before = await scratchDatabasesLeft();
    const m = await serverDevices.run({ devices: 30, intervalMs: 500, windowMs: 2000, db: "pg" }, ctx());
    expect(value(m, "connections")).toBe(30);
    expect(value(m, "online-rate")).toBeGreaterThan(0);
    expect(value(m, "latency-p99")).toBeGreaterThanOrEqual(value(m, "latency-p50"));
    const d = m.details as { probes: number; latency: { received: number }; simulator: { applied: number } };
    expect(d.latency.received).toBeGreaterThan(0);
    // The simulated devices applied their first config (the probes are raw links).
    expect(d.simulator.applied).toBe(30 - d.probes);
    // Then the whole fleet dropped, and the server recorded every link's end.
    expect(m.figures.find((f) => f.key === "drop")?.value).toBeGreaterThan(0);
    expect(measured).toContain("ws-echo-connections");
    expect(await scratchDatabasesLeft()).toBe(before);
  }, 180_000);

  it("server-ingest persists every status it took in", async () => {
    const m = await serverIngest.run({ devices: 10, window: 1, durationMs: 1000 }, ctx());
    expect(value(m, "taken-in-per-sec")).toBeGreaterThan(0);
    const d = m.details as {
      load: { sent: number };
      written: number;
      dropped: number;
      tableRows: { before: number; after: number };
    };
    expect(d.dropped).toBe(0);
    expect(d.written).toBe(d.load.sent * 4);
    expect(d.tableRows.after - d.tableRows.before).toBe(d.written);
  }, 180_000);

  it("server-fanout completes one job per device from one API call", async () => {
    const m = await serverFanout.run({ devices: 12 }, ctx());
    const d = m.details as { jobs: number; perJob: { count: number }; applyBytes: number };
    expect(d.jobs).toBe(12);
    expect(d.perJob.count).toBe(12);
    expect(d.applyBytes).toBeGreaterThan(1000);
    expect(value(m, "all-complete-ms")).toBeGreaterThanOrEqual(value(m, "request-ms"));
    expect(m.figures.find((f) => f.key === "jobs-per-sec")?.baseline?.case).toBe("ws-broadcast");
    // An absolute reading (a bare server has no job to compare with): no same-run baseline.
    expect(m.figures.find((f) => f.key === "server-cpu-per-job")?.value).toBeGreaterThan(0);
  }, 180_000);

  it("server-restart: every device back online and reconciled after kill -9, each queued job complete once", async () => {
    const m = await serverRestart.run({ devices: 12 }, ctx());
    const fig = (key: string) => m.figures.find((f) => f.key === key)?.value;
    expect(value(m, "online-rate")).toBeGreaterThan(0);
    expect(fig("jobs-queued")).toBe(12);
    expect(fig("jobs-complete")).toBe(12);
    expect(fig("jobs-failed")).toBe(0);
    expect(fig("jobs-doubled")).toBe(0);
    expect(fig("reconciled-from-start-ms")!).toBeGreaterThanOrEqual(fig("online-from-start-ms")!);
    expect(fig("online-from-kill-ms")!).toBeGreaterThan(fig("online-from-start-ms")!);
  }, 300_000);

  it("server-api answers every endpoint with 200 on PGlite while the fleet reports", async () => {
    // A 3 s window: only requests sent and answered inside it count, and one PGlite statement of a duty at start
    // (the whole connection is one) must not leave an endpoint without any; this checks the form, not the speed.
    const m = await serverApi.run({ devices: 12, db: "pglite", concurrency: 4, durationMs: 3000, intervalMs: 1000 }, ctx());
    expect(m.notes).toEqual([]);
    const endpoints = (m.details as { endpoints: { key: string; requests: number; recordsTotal: string | null }[] }).endpoints;
    expect(endpoints.map((e) => [e.key, e.recordsTotal])).toEqual([
      ["devices-summary", "1"],
      ["devices-detailed", "1"],
      ["tunnels", "24"],
      ["tunnels-by-status", "24"],
      ["jobs", "12"],
      ["notifications", "12"],
    ]);
    for (const e of endpoints) expect(e.requests, e.key).toBeGreaterThan(0);
    expect(value(m, "devices-summary-p99")).toBeGreaterThan(0);
    // 12 devices every second over six windows of 3 s: the fleet kept reporting while the lists were read.
    const reporting = (m.details as { reporting: { statuses: number; windowMs: number } }).reporting;
    expect(reporting.windowMs).toBeGreaterThan(15_000);
    expect(reporting.statuses).toBeGreaterThan(0.9 * 12 * (reporting.windowMs / 1000));
    const rate = m.figures.find((f) => f.key === "statuses-ingested-rate")!;
    expect(rate.value).toBeCloseTo(reporting.statuses / (reporting.windowMs / 1000), 6);
  }, 180_000);

  it("device-approve times approvals and LAN changes after its warm-up, then approves the rest in bulk", async () => {
    const m = await deviceApprove.run({ devices: 40, db: "pglite", singles: 5 }, ctx());
    expect(m.notes).toEqual([]);
    const details = m.details as { warmup: number; approveMs: number[]; changeMs: number[] };
    expect(details.warmup).toBe(20);
    expect(details.approveMs).toHaveLength(5);
    expect(details.changeMs).toHaveLength(5);
    expect(value(m, "approve-p50")).toBeGreaterThan(0);
    // 40 devices: 20 warm-up and 5 timed approvals one by one, the other 15 in bulk.
    expect(value(m, "bulk-per-sec") * (value(m, "bulk-ms") / 1000)).toBeCloseTo(15, 6);
  }, 180_000);

  it("ws-broadcast and http-static baselines measure every answer", async () => {
    const b = await wsBroadcast.run({ connections: 10, bytes: 8192 }, ctx());
    expect((b.details as { answered: number }).answered).toBe(10);
    const h = await httpStatic.run({ bytes: 8192, concurrency: 4, durationMs: 300 }, ctx());
    expect(h.figures.find((f) => f.key === "requests-per-sec")!.value).toBeGreaterThan(0);
    expect((h.details as { bodyBytes: number }).bodyBytes).toBe(8192);
  }, 120_000);
});
