/**
 * Baseline (a): a bare ws echo server holding N connections, each sending a
 * status-sized message per interval. The server and the load generator run
 * in separate processes; memory and CPU of the server are read from /proc.
 */
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { cpuPercent, readProcUsage } from "../proc-usage.ts";
import type { BenchCase, BenchMode, Params } from "../types.ts";
import { sleep, stopAll } from "./util.ts";

export interface EchoConnectionsParams extends Params {
  connections: number;
  intervalMs: number;
  windowMs: number;
}

/**
 * The parameters this case is measured with at `connections`, so other cases
 * (the simulator's footprint now, the server's connected-devices case later)
 * refer to the very same measurement. Full runs use the 10 s status
 * period; quick runs 2 s, so a 10 s window still holds thousands of samples.
 */
export function echoConnectionsParams(mode: BenchMode, connections: number): EchoConnectionsParams {
  return mode === "quick"
    ? { connections, intervalMs: 2000, windowMs: 10_000 }
    : { connections, intervalMs: 10_000, windowMs: 30_000 };
}

export const wsEchoConnections: BenchCase<EchoConnectionsParams> = {
  name: "ws-echo-connections",
  kind: "baseline",
  title: "bare ws echo server holding N connections",
  description:
    "A bare `ws` echo server (own process) holds N connections from a load generator (another process); each connection sends a " +
    "status-sized message (4 tunnel samples) once per interval at evenly spread phases. Reports the server's RSS growth per " +
    "connection, its CPU while echoing, and the echo round trip p50/p99 measured by the load generator.",
  sizes: (mode) => (mode === "quick" ? [1000] : [1000, 5000, 10_000]).map((n) => echoConnectionsParams(mode, n)),
  async run(params, ctx) {
    let server: Worker | undefined;
    let loader: Worker | undefined;
    try {
      server = spawnWorker(workerPath("ws-echo-server"));
      loader = spawnWorker(workerPath("ws-load"), { nodeFlags: ["--expose-gc"] });
      const { port } = await server.ready;
      await loader.ready;
      const url = `ws://127.0.0.1:${port}/`;
      // One warm-up connection on each side, so lazily loaded code is not counted per connection.
      await loader.call("connect", { url, count: 1 });
      await sleep(500);
      const server0 = readProcUsage(server.pid);
      const loader0 = await loader.call<{ rssBytes: number; heapUsedBytes: number }>("memory");
      const rest = params.connections - 1;
      const conn = await loader.call<{ open: number; failed: number; firstError: string | null; elapsedMs: number }>("connect", {
        url,
        count: rest,
        concurrency: 200,
      });
      ctx.log(`  ${conn.open} connections open (${conn.failed} failed) in ${(conn.elapsedMs / 1000).toFixed(1)} s`);
      await sleep(1000);
      const server1 = readProcUsage(server.pid);
      const loader1 = await loader.call<{ rssBytes: number; heapUsedBytes: number }>("memory");
      const held = (await server.call<{ connections: number }>("stats")).connections;
      const lat = await loader.call<Record<string, number>>("latency", {
        intervalMs: params.intervalMs,
        durationMs: params.windowMs,
      });
      const server2 = readProcUsage(server.pid);
      const added = held - 1;
      const notes: string[] = [];
      if (conn.failed > 0) notes.push(`${conn.failed} connections failed: ${conn.firstError}`);
      if (lat.skipped! > 0)
        notes.push(`${lat.skipped} sends skipped because the previous echo was still out (round trip > interval)`);
      return {
        figures: [
          { key: "connections", label: "connections held", value: held, unit: "count", better: "higher" },
          {
            key: "connect-rate",
            label: "connections opened per second",
            value: rest / (conn.elapsedMs / 1000),
            unit: "conn/s",
            better: "higher",
          },
          { key: "rss", label: "server RSS with N connections", value: server1.rssBytes, unit: "B", better: "lower" },
          {
            key: "rss-per-connection",
            label: "server RSS per connection",
            value: added > 0 ? (server1.rssBytes - server0.rssBytes) / added : null,
            unit: "B",
            better: "lower",
          },
          {
            key: "cpu",
            label: "server CPU while echoing (100 % = 1 core)",
            value: cpuPercent(server1, server2),
            unit: "%",
            better: "lower",
          },
          { key: "latency-p50", label: "echo round trip p50", value: lat.p50 ?? null, unit: "ms", better: "lower" },
          { key: "latency-p99", label: "echo round trip p99", value: lat.p99 ?? null, unit: "ms", better: "lower" },
          {
            key: "client-rss-per-connection",
            label: "load generator RSS per connection",
            value: conn.open > 0 ? (loader1.rssBytes - loader0.rssBytes) / conn.open : null,
            unit: "B",
            better: "lower",
          },
          {
            key: "client-heap-per-connection",
            label: "load generator JS heap per connection",
            value: conn.open > 0 ? (loader1.heapUsedBytes - loader0.heapUsedBytes) / conn.open : null,
            unit: "B",
            better: "lower",
          },
        ],
        notes,
        details: {
          connect: conn,
          latency: lat,
          server: { before: server0, connected: server1, after: server2 },
          loader: { before: loader0, connected: loader1 },
        },
      };
    } finally {
      await stopAll(server, loader);
    }
  },
};
