/**
 * Agent (d): what the real agent daemon (`tern-agent run`, standalone mode,
 * connected to a fake gateway in its router's namespace) costs in memory and
 * CPU, idle before any config, during the apply of a full config, and while
 * running it (probing its tunnels, reporting every second).
 */

import { type ManagedAgent, startManagedAgent, stopManagedAgent } from "../agent/agent.ts";
import { routerAConfig } from "../agent/configs.ts";
import { buildRouterLab, DAEMON_COMMANDS, type RouterLab, requireLab } from "../agent/lab.ts";
import { cpuPercent, readProcUsage } from "../proc-usage.ts";
import type { BenchCase, Params } from "../types.ts";
import type { NodeIdleParams } from "./node-idle.ts";
import { sleep } from "./util.ts";

export interface AgentFootprintParams extends Params {
  settleMs: number;
  windowMs: number;
}

export const agentFootprint: BenchCase<AgentFootprintParams> = {
  name: "agent-footprint",
  kind: "agent",
  title: "agent RSS and CPU: idle, applying a full config, running it",
  description:
    "The real `tern-agent run` in a lab router (standalone mode: it runs strongSwan, FRR, keepalived and kea itself), " +
    "registered with the simulator's fake gateway inside the router's namespace. Read from /proc of the agent process " +
    "(daemons not included): idle after hello, then during the apply of a full config (RSS sampled every 20 ms, CPU over " +
    "the apply), then running that config (one tunnel probed every 500 ms, a status every second). Baseline: `node-idle`, " +
    "the same runtime (plain node, the bin's flags) with nothing loaded, over the same windows.",
  sizes: (mode) => [mode === "quick" ? { settleMs: 2000, windowMs: 3000 } : { settleMs: 5000, windowMs: 10_000 }],
  async run(params, ctx) {
    requireLab(DAEMON_COMMANDS);
    const base = { case: "node-idle", params: { settleMs: params.settleMs, windowMs: params.windowMs } satisfies NodeIdleParams };
    let lab: RouterLab | undefined;
    let agent: ManagedAgent | undefined;
    try {
      lab = await buildRouterLab("bfoot");
      agent = await startManagedAgent(lab.a);
      const pid = agent.daemon.pid;
      await sleep(params.settleMs);
      const i0 = readProcUsage(pid);
      await sleep(params.windowMs);
      const i1 = readProcUsage(pid);

      let peak = i1.rssBytes;
      const sampler = setInterval(() => {
        try {
          peak = Math.max(peak, readProcUsage(pid).rssBytes);
        } catch {
          // gone: the apply call reports it
        }
      }, 20);
      const a0 = readProcUsage(pid);
      const applied = await agent.gateway
        .call<{ ms: number; result: { ok: boolean; error?: string } }>("apply", { config: routerAConfig(agent.deviceId, lab.a) })
        .finally(() => clearInterval(sampler));
      const a1 = readProcUsage(pid);
      if (!applied.result.ok) throw new Error(`the agent refused the full config: ${applied.result.error}`);
      peak = Math.max(peak, a1.rssBytes);

      await sleep(params.settleMs);
      const r0 = readProcUsage(pid);
      await sleep(params.windowMs);
      const r1 = readProcUsage(pid);
      ctx.log(`agent-footprint: idle ${(i1.rssBytes / 2 ** 20).toFixed(1)} MiB, peak ${(peak / 2 ** 20).toFixed(1)} MiB`);
      return {
        figures: [
          {
            key: "idle-rss",
            label: "agent RSS, idle (no config)",
            value: i1.rssBytes,
            unit: "B",
            better: "lower",
            baseline: { ...base, key: "rss" },
          },
          {
            key: "idle-cpu",
            label: "agent CPU, idle (100 % = 1 core)",
            value: cpuPercent(i0, i1),
            unit: "%",
            better: "lower",
            baseline: { ...base, key: "cpu" },
          },
          {
            key: "apply-peak-rss",
            label: "agent peak RSS while applying a full config",
            value: peak,
            unit: "B",
            better: "lower",
            baseline: { ...base, key: "rss" },
          },
          {
            key: "apply-cpu",
            label: "agent CPU during the full apply",
            value: cpuPercent(a0, a1),
            unit: "%",
            better: "lower",
            baseline: { ...base, key: "cpu" },
          },
          {
            key: "running-rss",
            label: "agent RSS running the full config",
            value: r1.rssBytes,
            unit: "B",
            better: "lower",
            baseline: { ...base, key: "rss" },
          },
          {
            key: "running-cpu",
            label: "agent CPU running the full config (probes, status every 1 s)",
            value: cpuPercent(r0, r1),
            unit: "%",
            better: "lower",
            baseline: { ...base, key: "cpu" },
          },
        ],
        details: { applyMs: applied.ms, agentPeakRssVmHWM: r1.peakRssBytes },
      };
    } finally {
      await stopManagedAgent(agent);
      await lab?.cleanup();
    }
  },
};
