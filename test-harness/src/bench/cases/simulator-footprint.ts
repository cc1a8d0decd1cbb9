/**
 * The simulator's own cost per simulated device (RSS and heap), read against
 * what a bare `ws` client connection costs in the load generator of
 * ws-echo-connections at the same N in the same run.
 */
import { MemoryFloor } from "../../simulator/memory-figures.ts";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import type { BenchCase, Params } from "../types.ts";
import { sleep, stopAll } from "./util.ts";
import { echoConnectionsParams } from "./ws-echo-connections.ts";

export interface FootprintParams extends Params {
  devices: number;
  tunnels: number;
}

interface Mem {
  rssBytes: number;
  heapUsedBytes: number;
}

export const simulatorFootprint: BenchCase<FootprintParams> = {
  name: "simulator-footprint",
  kind: "tool",
  title: "device simulator memory per simulated device",
  description:
    "One simulator process registers and connects N devices (4 tunnels each, status every 10 s) to the fake gateway in another " +
    "process. Per-device cost = (RSS after N − RSS after device 0 alone) / (N − 1), after a forced GC; the baseline is the bare " +
    "ws load generator's cost per connection measured the same way. RSS includes heap pages V8 keeps committed after the " +
    "registration burst (fetch and JSON garbage), which weighs less per device as N grows; the JS heap figure is live data only.",
  sizes: (mode) => (mode === "quick" ? [1000] : [1000, 10_000]).map((devices) => ({ devices, tunnels: 4 })),
  async run(params, ctx) {
    let gateway: Worker | undefined;
    let sim: Worker | undefined;
    try {
      gateway = spawnWorker(workerPath("fake-gateway"), { args: ["10000"] });
      sim = spawnWorker(workerPath("simulator"), { nodeFlags: ["--expose-gc"] });
      const { url, token } = await gateway.ready;
      await sim.ready;
      await sim.call("create", {
        options: { server: url, token, count: params.devices, syntheticTunnels: params.tunnels, concurrency: 200 },
      });
      await sim.call("warm");
      await sleep(300);
      const m0 = await sim.call<Mem>("memory");
      const reg = await sim.call<{ elapsedMs: number }>("register");
      const con = await sim.call<{ elapsedMs: number; ready: number; failures: number }>("connect");
      ctx.log(
        `  ${con.ready} devices ready; registered in ${(reg.elapsedMs / 1000).toFixed(1)} s, connected in ${(con.elapsedMs / 1000).toFixed(1)} s`,
      );
      await sleep(1000);
      const m1 = await sim.call<Mem>("memory");
      const added = con.ready - 1;
      // Growth over the lower of the two readings: never negative (simulator/memory-figures.ts).
      const floor = new MemoryFloor();
      floor.see(m0);
      const per = floor.perDevice(m1, added);
      const baseline = {
        case: "ws-echo-connections",
        params: echoConnectionsParams(ctx.mode, params.devices),
        key: "client-rss-per-connection",
      };
      return {
        figures: [
          {
            key: "ready",
            label: "simulated devices connected",
            value: con.ready,
            unit: "count",
            better: "higher",
            baseline: { ...baseline, key: "connections" },
          },
          {
            key: "rss-per-device",
            label: "simulator RSS per device",
            value: per.rssBytes,
            unit: "B",
            better: "lower",
            baseline,
          },
          {
            key: "heap-per-device",
            label: "simulator JS heap per device",
            value: per.heapUsedBytes,
            unit: "B",
            better: "lower",
            baseline: { ...baseline, key: "client-heap-per-connection" },
          },
          {
            key: "onboard-rate",
            label: "devices registered and connected per second",
            value: params.devices / ((reg.elapsedMs + con.elapsedMs) / 1000),
            unit: "dev/s",
            better: "higher",
            baseline: { ...baseline, key: "connect-rate" },
          },
        ],
        notes: con.failures > 0 ? [`${con.failures} devices failed to register or connect`] : [],
        details: { before: m0, after: m1, registerMs: reg.elapsedMs, connectMs: con.elapsedMs },
      };
    } finally {
      await sim?.call("stop", {}, 20_000).catch(() => undefined);
      await stopAll(gateway, sim);
    }
  },
};
