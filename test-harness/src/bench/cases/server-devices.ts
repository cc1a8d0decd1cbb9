/**
 * Issue 8 (1): connected devices. Tern's server (own process, scratch
 * PostgreSQL database) takes a seeded fleet of N devices with 4 tunnels each
 * online: a tenth as raw probe links, the rest simulated (both in their own
 * processes), each with its first config as a job and a status every
 * interval. Read against a bare ws echo server holding N connections in the
 * same run (ws-echo-connections at the same N and interval).
 */
import { randomBytes } from "node:crypto";
import { cpuPercent, readProcUsage } from "../proc-usage.ts";
import { fleetSizes, probeCount, rampFleet, startLoadWorkers, waitFor } from "../server/connect.ts";
import { type DbTarget, type Fleet, scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import type { BenchCase, BenchContext, Figure, Params } from "../types.ts";
import { sleep, stopAll } from "./util.ts";
import { type EchoConnectionsParams, echoConnectionsParams } from "./ws-echo-connections.ts";

export interface ServerDevicesParams extends Params {
  devices: number;
  intervalMs: number;
  windowMs: number;
  /** "pglite" = the server's embedded default (its RSS includes PGlite's). */
  db: DbTarget;
}

/** The embedded database is read at 1,000 devices: issue 14's target for it (RSS ≤ 400 MB) is set there. */
export const PGLITE_DEVICES = 1000;

/**
 * The embedded server's first start: a new, empty data directory (the server makes the database), no device.
 * RSS after a forced GC 2 s after it listens (it collects the garbage of opening after 1 s), and its peak.
 */
async function firstStart(ctx: BenchContext): Promise<{ rssBytes: number; peakRssBytes: number }> {
  const scratch = await scratchDatabase("pglite", ctx);
  const tern = await startTern({ scratch, secretKey: randomBytes(32).toString("base64") }, ctx);
  try {
    await sleep(2000);
    const live = await tern.worker.call<Mem>("gc");
    return { rssBytes: live.rssBytes, peakRssBytes: readProcUsage(tern.pid).peakRssBytes };
  } finally {
    await tern.stop();
    await scratch.drop();
  }
}

interface Mem {
  rssBytes: number;
  heapUsedBytes: number;
}

export const serverDevices: BenchCase<ServerDevicesParams> = {
  name: "server-devices",
  kind: "server",
  title: "Tern server holding N connected devices (PostgreSQL; PGlite at 1,000)",
  description:
    "A scratch PostgreSQL database (with db=pglite a PGlite data directory, the server's embedded default) is seeded with N approved devices (4 tunnels each, 2N tunnels) and their compiled first " +
    "configs as queued jobs; Tern's server runs in its own process. One raw device link connects first (warm-up: RSS after a " +
    "forced GC is read), then the rest: a tenth of the fleet as raw probe links and the others as simulated devices, each in " +
    "its own process, all sending a status (4 tunnel samples) every interval; online = every first job complete. Memory is " +
    "read after a forced GC one interval after the last device came online (a link's state is made at its first status). Status " +
    "latency = probe sends a status and a websocket ping right after it: the server's ws reads frames in order and its status " +
    "handler (parse, validate, live state, ingest buffer) is synchronous, so the pong comes back once the status is ingested " +
    "in memory (samples reach the table at the next batch flush, TERN_INGEST_FLUSH_MS). Last, the whole fleet drops at once " +
    "(simulator and probes close every link together), timed until the database holds no device as connected. Baseline: " +
    "ws-echo-connections at the same N and interval (none for the drop). With db=pglite the server is first started once on a " +
    "new, empty data directory (it makes the database), without devices: its RSS after a forced GC 2 s after it listens, and its peak.",
  sizes: (mode) =>
    fleetSizes(mode).flatMap((devices) => {
      const e = echoConnectionsParams(mode, devices);
      const pg = { devices, intervalMs: e.intervalMs, windowMs: e.windowMs, db: "pg" as const };
      return devices === PGLITE_DEVICES ? [pg, { ...pg, db: "pglite" as const }] : [pg];
    }),
  async run(params, ctx) {
    const echo: EchoConnectionsParams = echoConnectionsParams(ctx.mode, params.devices);
    await ctx.measure("ws-echo-connections", echo);
    const first = params.db === "pglite" ? await firstStart(ctx) : null;
    if (first)
      ctx.log(
        `  first start on a new data directory: RSS ${(first.rssBytes / 2 ** 20).toFixed(1)} MiB, peak ${(first.peakRssBytes / 2 ** 20).toFixed(1)} MiB`,
      );
    const scratch = await scratchDatabase(params.db, ctx);
    let tern: TernServer | undefined;
    let workers: Awaited<ReturnType<typeof startLoadWorkers>> | undefined;
    try {
      const fleet: Fleet = await seedScratch(scratch, { devices: params.devices, configure: true }, ctx);
      tern = await startTern(fleet, ctx);
      workers = await startLoadWorkers();
      const { sim, probes } = workers;
      const k = probeCount(params.devices);
      const server = tern.worker;

      // Warm-up: one device online, so lazily loaded code is not counted per device.
      await probes.call("connect", { url: tern.wsUrl, secret: fleet.tokenSecret, fleet: params.devices, from: 0, count: 1 });
      await waitFor(
        "the first device's job",
        async () => (await server.call<Record<string, number>>("jobCounts", { type: "modify" })).complete === 1,
        60_000,
      );
      await sleep(500);
      const live0 = await server.call<Mem>("gc");
      const u0 = readProcUsage(tern.pid);

      const ramp = await rampFleet(fleet, tern, workers, { from: 1, probes: k, statusIntervalMs: params.intervalMs }, ctx);
      ctx.log(`  ${params.devices} devices online (first jobs complete) in ${(ramp.onlineMs / 1000).toFixed(1)} s`);
      // Memory once every device has reported for a whole interval: what a link keeps (healing baselines, the rule
      // engine's context, statistics) is made at its first status. Read 1 s after the ramp, the last devices to come
      // online had not reported yet (at 10,000 devices 1.75 KiB of live heap a device less than 30 s later).
      await sleep(params.intervalMs + 2000);
      const u1 = readProcUsage(tern.pid);
      const held = (await server.call<{ connected: number }>("stats")).connected;
      const live1 = await server.call<Mem>("gc");
      const s0 = await server.call<{ statusIngested: number; tunnelSamples: number }>("stats");
      const cpu0 = readProcUsage(tern.pid);
      const lat = await probes.call<Record<string, number>>("latency", {
        intervalMs: params.intervalMs,
        durationMs: params.windowMs,
      });
      const cpu1 = readProcUsage(tern.pid);
      const s1 = await server.call<{ statusIngested: number; tunnelSamples: number; dropped: number; batches: unknown[] }>(
        "stats",
      );
      const simStats = await sim.call<Record<string, number>>("stats");
      // The whole fleet drops at once (the data centre's uplink fails, a load balancer restarts): how long the
      // server takes to record every link's end (session gone, device disconnected, running jobs queued again).
      const dropStart = performance.now();
      await Promise.all([sim.call("stop", {}, 60_000), probes.call("close", {}, 60_000)]);
      await waitFor(
        "every device disconnected in the database",
        async () => (await server.call<{ connected: number }>("connectedRows")).connected === 0,
        180_000,
      );
      const dropMs = performance.now() - dropStart;
      ctx.log(`  ${held} links ended, every device disconnected in the database after ${(dropMs / 1000).toFixed(1)} s`);
      const added = held - 1;
      const notes: string[] = [];
      if (ramp.failed > 0) notes.push(`${ramp.failed} devices failed to connect: ${ramp.firstError}`);
      if (lat.skipped! > 0)
        notes.push(`${lat.skipped} probe statuses skipped: the previous pong was still out (round trip > interval)`);
      if (lat.lost! > 0) notes.push(`${lat.lost} probe pongs never came back`);
      const windowS = (cpu1.at - cpu0.at) / 1000;
      return {
        figures: [
          {
            key: "connections",
            label: "devices connected",
            value: held,
            unit: "count",
            better: "higher",
            baseline: { case: "ws-echo-connections", params: echo, key: "connections" },
          },
          {
            key: "online-rate",
            label: "devices brought online per second (connect + first job)",
            value: (params.devices - 1) / (ramp.onlineMs / 1000),
            unit: "dev/s",
            better: "higher",
            baseline: { case: "ws-echo-connections", params: echo, key: "connect-rate" },
          },
          {
            key: "rss",
            label: "server RSS with N devices",
            value: u1.rssBytes,
            unit: "B",
            better: "lower",
            baseline: { case: "ws-echo-connections", params: echo, key: "rss" },
          },
          {
            key: "peak-rss",
            label: "server peak RSS (ramp included)",
            value: cpu1.peakRssBytes,
            unit: "B",
            better: "lower",
            baseline: { case: "ws-echo-connections", params: echo, key: "rss" },
          },
          {
            key: "rss-per-device",
            label: "server RSS per device (after GC)",
            value: added > 0 ? (live1.rssBytes - live0.rssBytes) / added : null,
            unit: "B",
            better: "lower",
            baseline: { case: "ws-echo-connections", params: echo, key: "rss-per-connection" },
          },
          {
            key: "cpu",
            label: "server CPU holding N devices (100 % = 1 core)",
            value: cpuPercent(cpu0, cpu1),
            unit: "%",
            better: "lower",
            baseline: { case: "ws-echo-connections", params: echo, key: "cpu" },
          },
          {
            key: "latency-p50",
            label: "status → ingested (pong) p50",
            value: lat.p50 ?? null,
            unit: "ms",
            better: "lower",
            baseline: { case: "ws-echo-connections", params: echo, key: "latency-p50" },
          },
          {
            key: "latency-p99",
            label: "status → ingested (pong) p99",
            value: lat.p99 ?? null,
            unit: "ms",
            better: "lower",
            baseline: { case: "ws-echo-connections", params: echo, key: "latency-p99" },
          },
          {
            key: "drop",
            label: "fleet dropping at once: every device disconnected in the database",
            value: dropMs,
            unit: "ms",
            better: "lower",
          },
          ...firstStartFigures(first, echo),
        ],
        notes,
        details: {
          probes: k,
          heapPerDevice: added > 0 ? (live1.heapUsedBytes - live0.heapUsedBytes) / added : null,
          ramp,
          latency: lat,
          statusesPerSec: (s1.statusIngested - s0.statusIngested) / windowS,
          samplesWrittenPerSec: (s1.tunnelSamples - s0.tunnelSamples) / windowS,
          dropped: s1.dropped,
          recentBatches: s1.batches.slice(-5),
          server: { warm: { ...u0, ...live0 }, online: { ...u1, live: live1 }, window: [cpu0, cpu1] },
          simulator: simStats,
          seed: fleet.seed,
        },
      };
    } finally {
      await workers?.sim.call("stop", {}, 60_000).catch(() => undefined);
      await stopAll(workers?.sim, workers?.probes);
      await tern?.stop();
      await scratch.drop();
    }
  },
};

function firstStartFigures(first: { rssBytes: number; peakRssBytes: number } | null, echo: EchoConnectionsParams): Figure[] {
  if (!first) return [];
  const baseline = { case: "ws-echo-connections", params: echo, key: "rss" };
  return [
    {
      key: "first-start-rss",
      label: "server RSS after its first start on a new data directory (no device)",
      value: first.rssBytes,
      unit: "B",
      better: "lower",
      baseline,
    },
    {
      key: "first-start-peak-rss",
      label: "server peak RSS during that first start",
      value: first.peakRssBytes,
      unit: "B",
      better: "lower",
      baseline,
    },
  ];
}
