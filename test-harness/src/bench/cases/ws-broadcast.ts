/**
 * Baseline of the job fan-out: a bare `ws` server sends one config-sized
 * message to each of N connections and a load generator (another process)
 * answers each with a small result, as a device answers `apply`. Times from
 * the first send to each answer and to the last one: the floor of a fan-out
 * on this machine, without compiling, storing or tracking anything.
 */
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import type { BenchCase, Params } from "../types.ts";
import { stopAll } from "./util.ts";

export interface BroadcastParams extends Params {
  connections: number;
  /** Size of the message sent to each connection (an apply with a compiled config). */
  bytes: number;
}

export const wsBroadcast: BenchCase<BroadcastParams> = {
  name: "ws-broadcast",
  kind: "baseline",
  title: "bare ws: one message to each of N connections, every answer back",
  description:
    "A bare `ws` server (own process) holding N connections from a load generator (another process) sends each connection one " +
    "message the size of an `apply` and times each small answer from the first send. Measured when a fan-out case refers to it.",
  sizes: () => [],
  async run(params, ctx) {
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
        concurrency: 200,
      });
      if (conn.open < params.connections)
        throw new Error(`only ${conn.open} of ${params.connections} connections opened: ${conn.firstError}`);
      const r = await server.call<{ answered: number; allAnsweredMs: number; p50: number; p99: number; sentMs: number }>(
        "broadcast",
        { bytes: params.bytes },
      );
      ctx.log(`  ${r.answered} answers in ${r.allAnsweredMs.toFixed(0)} ms`);
      return {
        figures: [
          { key: "all-answered-ms", label: "every connection answered", value: r.allAnsweredMs, unit: "ms", better: "lower" },
          {
            key: "answers-per-sec",
            label: "answers per second",
            value: r.answered / (r.allAnsweredMs / 1000),
            unit: "msg/s",
            better: "higher",
          },
          { key: "latency-p50", label: "send → answer p50", value: r.p50, unit: "ms", better: "lower" },
          { key: "latency-p99", label: "send → answer p99", value: r.p99, unit: "ms", better: "lower" },
        ],
        notes: r.answered < params.connections ? [`only ${r.answered} of ${params.connections} answered`] : [],
        details: { ...r },
      };
    } finally {
      await stopAll(server, loader);
    }
  },
};
