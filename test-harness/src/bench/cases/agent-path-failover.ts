/**
 * Agent (c, second half): a degraded path → the agent's link-quality policy
 * moves the matching traffic. Router A runs the real `tern-agent run` with its
 * full config (two labelled WANs, a link-quality rule: at most 2 % loss); the
 * WAN router starts dropping `lossPercent` % of what it sends to A's wan0; the
 * figure is the time until the rule's routing table points at wan1.
 */

import { Netns, run } from "@tern/netlab";
import { type ManagedAgent, startManagedAgent, stopManagedAgent } from "../agent/agent.ts";
import { routerAConfig } from "../agent/configs.ts";
import { buildRouterLab, DAEMON_COMMANDS, type RouterLab, requireLab } from "../agent/lab.ts";
import { summarize } from "../stats.ts";
import type { BenchCase, Params } from "../types.ts";
import type { PolicyBoundParams } from "./policy-bound.ts";
import { sleep } from "./util.ts";

export interface PathFailoverParams extends Params {
  lossPercent: number;
  repeats: number;
  /** Good probes before the first degradation, so the windows hold measurements (20 × 500 ms fill them). */
  warmMs: number;
}

/** The rule's table (slot 0) and the device its default route leaves by. */
export async function policyDevice(ns: Netns): Promise<string | null> {
  const r = await run(["ip", "-n", ns.name, "-4", "route", "show", "table", "30000"], { allowFailure: true });
  return /\bdev (\S+)/.exec(r.stdout)?.[1] ?? null;
}

/** Drops `lossPercent` % of what the WAN router sends out of `ifname` (0 removes the table). */
export async function wanLoss(wan: Netns, ifname: string, lossPercent: number): Promise<void> {
  // numgen's range is 0–99: a total loss is a plain drop.
  const match = lossPercent >= 100 ? "" : ` numgen random mod 100 < ${lossPercent}`;
  const rules =
    lossPercent > 0
      ? `table ip tern_bench_loss {\n  chain post {\n    type filter hook postrouting priority -300; policy accept;\n    oifname "${ifname}"${match} drop\n  }\n}\n`
      : "";
  await wan.exec(["nft", "-f", "-"], { input: `table ip tern_bench_loss\ndelete table ip tern_bench_loss\n${rules}` });
}

export const agentPathFailover: BenchCase<PathFailoverParams> = {
  name: "agent-path-failover",
  kind: "agent",
  title: "link-quality policy: path degraded → traffic moved",
  description:
    "Router A runs the real `tern-agent run` with its full config, tunnels without path labels so the rule's candidates " +
    "are its two WANs (wan0 first, wan1 second; each probed at its gateway every 500 ms, window 20, time-out 1 s; rule " +
    "`link-quality`, at most 2 % loss). The WAN router drops `lossPercent` % of the packets toward wan0 (nftables); the " +
    "figure is the time until the rule's table (30000) routes by wan1, median of `repeats` (the loss is removed and the " +
    "agent moves back after the rule's 10 s hold-down in between). Baseline: `policy-bound`, the computed mean time to " +
    "the first lost probe with these probe settings.",
  sizes: (mode) => [{ lossPercent: 50, repeats: mode === "quick" ? 1 : 3, warmMs: 10_000 }],
  async run(params, ctx) {
    requireLab(DAEMON_COMMANDS);
    const bound = {
      case: "policy-bound",
      params: { probeIntervalMs: 500, timeoutMs: 1000, lossPercent: params.lossPercent } satisfies PolicyBoundParams,
      key: "detect-ms",
    };
    let lab: RouterLab | undefined;
    let agent: ManagedAgent | undefined;
    try {
      lab = await buildRouterLab("bpath");
      agent = await startManagedAgent(lab.a);
      const config = routerAConfig(agent.deviceId, lab.a);
      config.tunnels = config.tunnels.map((t) => ({ ...t, pathLabel: null }));
      const applied = await agent.gateway.call<{ result: { ok: boolean; error?: string } }>("apply", { config });
      if (!applied.result.ok) throw new Error(`apply failed: ${applied.result.error}`);
      const ra = lab.a.ns;
      const moved: number[] = [];
      for (let i = 0; i < params.repeats; i++) {
        await Netns.waitFor("the policy on wan0", async () => (await policyDevice(ra)) === "wan0", 60_000, 100);
        await sleep(i === 0 ? params.warmMs : 2000);
        const t0 = performance.now();
        await wanLoss(lab.wan, "a0", params.lossPercent);
        await Netns.waitFor("the policy on wan1", async () => (await policyDevice(ra)) === "wan1", 60_000, 20);
        moved.push(performance.now() - t0);
        ctx.log(`agent-path-failover: traffic on wan1 after ${moved.at(-1)!.toFixed(0)} ms`);
        await wanLoss(lab.wan, "a0", 0);
      }
      return {
        figures: [
          {
            key: "moved-ms",
            label: `path degraded (${params.lossPercent} % loss) → traffic moved (median)`,
            value: summarize(moved).p50,
            unit: "ms",
            better: "lower",
            baseline: bound,
          },
        ],
        details: { movedMs: moved },
      };
    } finally {
      await stopManagedAgent(agent);
      await lab?.cleanup();
    }
  },
};
