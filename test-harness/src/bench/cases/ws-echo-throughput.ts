/** Baseline (b): how many status-sized messages per second a bare ws echo server turns around. */
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { cpuPercent, readProcUsage } from "../proc-usage.ts";
import type { BenchCase, Params } from "../types.ts";
import { stopAll } from "./util.ts";

export interface EchoThroughputParams extends Params {
  connections: number;
  /** Messages in flight per connection. */
  window: number;
  durationMs: number;
}

export const wsEchoThroughput: BenchCase<EchoThroughputParams> = {
  name: "ws-echo-throughput",
  kind: "baseline",
  title: "bare ws echo throughput, status-sized messages",
  description:
    "A load generator (own process) keeps `window` status-sized messages (4 tunnel samples) in flight on each of `connections` " +
    "connections to a bare `ws` echo server (another process) and counts echoes per second after a 1 s warm-up. Both processes' " +
    "CPU is reported: on a 2-core machine the one near 100 % is the limit.",
  sizes: (mode) =>
    mode === "quick"
      ? [{ connections: 16, window: 32, durationMs: 8000 }]
      : [
          { connections: 16, window: 32, durationMs: 30_000 },
          { connections: 256, window: 4, durationMs: 30_000 },
        ],
  async run(params) {
    let server: Worker | undefined;
    let loader: Worker | undefined;
    try {
      server = spawnWorker(workerPath("ws-echo-server"));
      loader = spawnWorker(workerPath("ws-load"));
      const { port } = await server.ready;
      await loader.ready;
      const conn = await loader.call<{ open: number; failed: number; firstError: string | null }>("connect", {
        url: `ws://127.0.0.1:${port}/`,
        count: params.connections,
      });
      if (conn.open < params.connections)
        throw new Error(`only ${conn.open} of ${params.connections} connections opened: ${conn.firstError}`);
      const s0 = readProcUsage(server.pid);
      const l0 = readProcUsage(loader.pid);
      const r = await loader.call<{ msgPerSec: number; messages: number; payloadBytes: number; elapsedMs: number }>(
        "throughput",
        {
          connections: params.connections,
          window: params.window,
          durationMs: params.durationMs,
        },
      );
      // The readings include the 1 s warm-up, when the load was the same.
      const s1 = readProcUsage(server.pid);
      const l1 = readProcUsage(loader.pid);
      return {
        figures: [
          { key: "msg-per-sec", label: "echoed messages per second", value: r.msgPerSec, unit: "msg/s", better: "higher" },
          {
            key: "mib-per-sec",
            label: "echoed payload per second",
            value: (r.msgPerSec * r.payloadBytes) / 2 ** 20,
            unit: "MiB/s",
            better: "higher",
          },
          { key: "server-cpu", label: "echo server CPU (100 % = 1 core)", value: cpuPercent(s0, s1), unit: "%", better: "lower" },
          {
            key: "loader-cpu",
            label: "load generator CPU (100 % = 1 core)",
            value: cpuPercent(l0, l1),
            unit: "%",
            better: "lower",
          },
        ],
        details: { ...r },
      };
    } finally {
      await stopAll(server, loader);
    }
  },
};
