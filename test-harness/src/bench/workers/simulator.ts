/**
 * A simulated fleet as a worker, driven over IPC: the load generator for
 * server benchmarks, and the subject of the simulator's footprint case.
 */
import { Simulator } from "../../simulator/fleet.ts";
import type { SimulatorInput } from "../../simulator/options.ts";
import type { TunnelMetricsInput } from "../../simulator/types.ts";
import { deviceId, deviceToken } from "../server/fleet-plan.ts";
import { collect, serve } from "./ipc.ts";

let fleet: Simulator | null = null;
/** Wall-clock times (epoch ms) of the apply-results sent since `mark`. */
let applyResults: number[] = [];
let marked = false;
/** Hashes of the applies each device received since `mark` (the restart and scale-out cases count re-deliveries). */
let appliesByDevice = new Map<number, string[]>();

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
      fleet.on((e) => {
        if (marked && e.type === "apply-result") applyResults.push(performance.timeOrigin + e.at);
        if (marked && e.type === "apply") {
          const list = appliesByDevice.get(e.device) ?? [];
          list.push(String((e as { hash?: string }).hash));
          appliesByDevice.set(e.device, list);
        }
      });
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
    /** Credentials of the benchmark fleet (server/fleet-plan.ts) instead of registering. */
    useFleetCredentials: (args) => {
      for (const d of need().devices)
        d.useCredentials({
          deviceId: deviceId(d.index),
          deviceToken: deviceToken(String(args.secret), d.index),
          isApproved: true,
        });
      return { devices: need().size };
    },
    /** Starts recording apply-results (fan-out). */
    mark: () => {
      applyResults = [];
      appliesByDevice = new Map();
      marked = true;
      return {};
    },
    /**
     * Since `mark`: devices that received an apply, the applies, devices that received the same config
     * (hash) more than once (`repeated`), and the (device, hash) pairs received more than once (`doubled`).
     */
    applyCounts: () => {
      let repeated = 0;
      let applies = 0;
      let doubled = 0;
      const examples: { device: number; hash: string; times: number }[] = [];
      for (const [device, hashes] of appliesByDevice) {
        applies += hashes.length;
        const perHash = new Map<string, number>();
        for (const h of hashes) perHash.set(h, (perHash.get(h) ?? 0) + 1);
        if (perHash.size < hashes.length) repeated++;
        for (const [hash, times] of perHash)
          if (times > 1) {
            doubled++;
            if (examples.length < 5) examples.push({ device, hash, times });
          }
      }
      return { devices: appliesByDevice.size, applies, repeated, doubled, examples };
    },
    /** Devices whose link is welcomed now. */
    ready: () => ({ ready: need().stats().ready }),
    applyResults: (args) => ({ count: applyResults.length, ...(args.times ? { times: applyResults } : {}) }),
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
