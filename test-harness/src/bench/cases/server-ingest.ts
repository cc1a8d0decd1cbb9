/**
 * Issue 8 (2): status ingestion. N seeded devices (4 real tunnels each) are
 * connected as raw device links (own process); each keeps one status in
 * flight (status + ping, the next when the pong is back), so the server runs
 * as fast as it can validate, update live state and buffer; its batched
 * writer persists the samples into the growing tunnel_samples table. After
 * the load stops, the time until the buffer has drained counts too:
 * "sustained" is what reached the table per second from the first send to
 * the last sample written. Baselines: a bare ws echo server with the same
 * connections and window, and raw INSERT / COPY of the same rows.
 */

import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { cpuPercent, readProcUsage } from "../proc-usage.ts";
import { fleetSizes, waitFor } from "../server/connect.ts";
import { TUNNELS_PER_DEVICE } from "../server/fleet-plan.ts";
import { scratchDatabase, seedScratch, startTern, type TernServer } from "../server/tern.ts";
import type { BenchCase, BenchMode, Params } from "../types.ts";
import type { IngestParams } from "./ingest.ts";
import { sleep, stopAll } from "./util.ts";
import type { EchoThroughputParams } from "./ws-echo-throughput.ts";

export interface ServerIngestParams extends Params {
  devices: number;
  /** Statuses in flight per device link. */
  window: number;
  durationMs: number;
}

interface IngestStats {
  statusIngested: number;
  tunnelSamples: number;
  dropped: number;
  writeFailures: number;
  buffered: number;
  batches: { samples: number; states: number; ms: number }[];
}

const durationFor = (mode: BenchMode) => (mode === "quick" ? 8000 : 20_000);

export const serverIngest: BenchCase<ServerIngestParams> = {
  name: "server-ingest",
  kind: "server",
  title: "Tern server status ingestion, statuses per second (PostgreSQL)",
  description:
    "N seeded devices (4 tunnels each) connect as raw device links from a load generator (own process) to Tern's server (own " +
    "process, scratch PostgreSQL database, per-device rate limit raised so it does not cut the load). Each link keeps `window` " +
    "statuses (4 tunnel samples, 2 interfaces) in flight: it sends a status and a ping, and the next one when the pong is back, " +
    "i.e. when the server has validated the status, updated live state and buffered its samples. Counted after a 1 s warm-up; " +
    "then the load stops and the batched writer drains. Figures: statuses taken in per second; statuses persisted per second, " +
    "sustained (samples in the table / 4, from the first send to the last sample written); samples written per second against " +
    "raw multi-row INSERT and COPY of the same rows (pg-ingest); CPU. Baseline: ws-echo-throughput with N connections and the " +
    "same window.",
  sizes: (mode) => fleetSizes(mode).map((devices) => ({ devices, window: 1, durationMs: durationFor(mode) })),
  async run(params, ctx) {
    const echo: EchoThroughputParams = { connections: params.devices, window: params.window, durationMs: params.durationMs };
    const rows: IngestParams = ctx.mode === "quick" ? { rows: 100_000, batch: 1000 } : { rows: 1_000_000, batch: 1000 };
    await ctx.measure("ws-echo-throughput", echo);
    const scratch = await scratchDatabase("pg", ctx);
    let tern: TernServer | undefined;
    let load: Worker | undefined;
    try {
      const fleet = await seedScratch(scratch, { devices: params.devices, configure: false }, ctx);
      tern = await startTern(fleet, ctx, { TERN_DEVICE_RATE: "1000000", TERN_DEVICE_RATE_BURST: "1000000" });
      load = spawnWorker(workerPath("device-load"));
      await load.ready;
      const conn = await load.call<{ ready: number; failed: number; firstError: string | null; elapsedMs: number }>("connect", {
        url: tern.wsUrl,
        secret: fleet.tokenSecret,
        fleet: params.devices,
        from: 0,
        count: params.devices,
        concurrency: 200,
      });
      ctx.log(`  ${conn.ready} device links connected in ${(conn.elapsedMs / 1000).toFixed(1)} s`);
      if (conn.ready < params.devices)
        throw new Error(`only ${conn.ready} of ${params.devices} links connected: ${conn.firstError}`);
      await sleep(1000);
      const server = tern.worker;
      await server.call("flush");
      const s0 = await server.call<IngestStats>("stats");
      const table0 = (await server.call<{ rows: number }>("samplesInTable")).rows;
      const u0 = readProcUsage(tern.pid);
      const t0 = performance.now();
      const r = await load.call<{ msgPerSec: number; messages: number; sent: number; sendingMs: number; payloadBytes: number }>(
        "throughput",
        { window: params.window, durationMs: params.durationMs },
      );
      const u1 = readProcUsage(tern.pid);
      const sentSamples = r.sent * TUNNELS_PER_DEVICE;
      // Drain: everything sent is in the table (or was dropped and counted).
      let last: IngestStats = s0;
      const drainMs = await waitFor(
        "the ingest buffer to drain",
        async () => {
          last = await server.call<IngestStats>("stats");
          return last.buffered === 0 && last.tunnelSamples - s0.tunnelSamples + (last.dropped - s0.dropped) >= sentSamples;
        },
        600_000,
        50,
      );
      const totalMs = performance.now() - t0;
      const table1 = (await server.call<{ rows: number }>("samplesInTable")).rows;
      const written = last.tunnelSamples - s0.tunnelSamples;
      const notes: string[] = [];
      const dropped = last.dropped - s0.dropped;
      if (dropped > 0) notes.push(`${dropped} samples dropped by the server (buffer full or failed writes): not sustained`);
      if (table1 - table0 !== written) notes.push(`table grew by ${table1 - table0} rows, the server counted ${written} written`);
      const batches = last.batches;
      const pgRef = (key: string) => ({ case: "pg-ingest", params: rows, key });
      const echoRef = (key: string) => ({ case: "ws-echo-throughput", params: echo, key });
      return {
        figures: [
          {
            key: "taken-in-per-sec",
            label: "statuses validated + live state per second",
            value: r.msgPerSec,
            unit: "msg/s",
            better: "higher",
            baseline: echoRef("msg-per-sec"),
          },
          {
            key: "sustained-per-sec",
            label: "statuses persisted per second, sustained (drain included)",
            value: written / TUNNELS_PER_DEVICE / (totalMs / 1000),
            unit: "msg/s",
            better: "higher",
            baseline: echoRef("msg-per-sec"),
          },
          {
            key: "samples-per-sec",
            label: "tunnel samples written per second (sustained)",
            value: written / (totalMs / 1000),
            unit: "rows/s",
            better: "higher",
            baseline: pgRef("insert-rows-per-sec"),
          },
          {
            key: "samples-per-sec-copy",
            label: "tunnel samples written per second, against COPY",
            value: written / (totalMs / 1000),
            unit: "rows/s",
            better: "higher",
            baseline: pgRef("copy-rows-per-sec"),
          },
          {
            key: "cpu",
            label: "server CPU under the load (100 % = 1 core)",
            value: cpuPercent(u0, u1),
            unit: "%",
            better: "lower",
            baseline: echoRef("server-cpu"),
          },
        ],
        notes,
        details: {
          connect: conn,
          load: r,
          drainMs,
          totalMs,
          written,
          dropped,
          writeFailures: last.writeFailures - s0.writeFailures,
          tableRows: { before: table0, after: table1 },
          batchesTail: batches.slice(-5),
          seed: fleet.seed,
        },
      };
    } finally {
      await load?.call("close", {}, 30_000).catch(() => undefined);
      await stopAll(load);
      await tern?.stop();
      await scratch.drop();
    }
  },
};
