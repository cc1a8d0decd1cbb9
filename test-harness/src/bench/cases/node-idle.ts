/** Baseline of agent-footprint: a plain node process with the agent's flags and nothing else, the agent's runtime alone. */
import { agentNodeFlags } from "../agent/agent.ts";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import { cpuPercent, readProcUsage } from "../proc-usage.ts";
import type { BenchCase, Params } from "../types.ts";
import { sleep, stopAll } from "./util.ts";

export interface NodeIdleParams extends Params {
  settleMs: number;
  windowMs: number;
}

export const nodeIdle: BenchCase<NodeIdleParams> = {
  name: "node-idle",
  kind: "baseline",
  title: "bare node process, idle",
  description:
    "A node process started like the agent (plain node with the agent bin's flags: the agent runs its bundle, no TypeScript " +
    "loader) that loads nothing else and waits: its RSS and CPU after `settleMs`, over `windowMs`, read from /proc. What any " +
    "program on this runtime costs before it does anything.",
  sizes: (mode) => [mode === "quick" ? { settleMs: 2000, windowMs: 3000 } : { settleMs: 5000, windowMs: 10_000 }],
  async run(params) {
    let w: Worker | undefined;
    try {
      w = spawnWorker(workerPath("idle-plain", "mjs"), { nodeFlags: agentNodeFlags(), loader: false });
      await w.ready;
      await sleep(params.settleMs);
      const u0 = readProcUsage(w.pid);
      await sleep(params.windowMs);
      const u1 = readProcUsage(w.pid);
      return {
        figures: [
          { key: "rss", label: "RSS", value: u1.rssBytes, unit: "B", better: "lower" },
          { key: "cpu", label: "CPU while idle (100 % = 1 core)", value: cpuPercent(u0, u1), unit: "%", better: "lower" },
        ],
      };
    } finally {
      await stopAll(w);
    }
  },
};
