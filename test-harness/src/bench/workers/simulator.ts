/**
 * A simulated fleet as a worker, driven over IPC: the load generator for
 * server benchmarks, and the subject of the simulator's footprint case.
 */
import { Simulator } from "../../simulator/fleet.ts";
import type { SimulatorInput } from "../../simulator/options.ts";
import type { TunnelMetricsInput } from "../../simulator/types.ts";
import { collect, serve } from "./ipc.ts";

let fleet: Simulator | null = null;

function need(): Simulator {
  if (!fleet) throw new Error("no fleet: call create first");
  return fleet;
}

function memory() {
  collect();
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed };
}

serve(
  {
    create: (args) => {
      fleet = Simulator.create({ failFast: false, ...(args.options as SimulatorInput) });
      return { devices: fleet.size };
    },
    /** Registers and connects device 0 alone, so later memory readings exclude one-time warm-up. */
    warm: async () => {
      const f = need();
      const t0 = performance.now();
      await f.device(0).register();
      await f.device(0).connect();
      return { elapsedMs: performance.now() - t0 };
    },
    register: async () => {
      const t0 = performance.now();
      await need().registerAll();
      return { elapsedMs: performance.now() - t0, ...need().stats() };
    },
    connect: async () => {
      const t0 = performance.now();
      await need().connectAll();
      return { elapsedMs: performance.now() - t0, ...need().stats() };
    },
    setMetrics: (args) => {
      need().setTunnelMetrics(args.metrics as TunnelMetricsInput);
      return {};
    },
    stats: () => ({ ...need().stats(), failures: need().failures.slice(0, 5) }),
    memory,
    stop: async () => {
      await fleet?.stop();
      fleet = null;
      return {};
    },
  },
  { pid: process.pid },
);
