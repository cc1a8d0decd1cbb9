/**
 * Agent (b): the tunnel loss, RTT and jitter the agent reports against the
 * impairment the lab applied, read against fping over the same kind of link
 * in the same run.
 */

import { type ImpairedLink, upImpairedLink } from "../agent/impaired-link.ts";
import { requireLab } from "../agent/lab.ts";
import { describePoint, type LinkPointParams, linkPoints } from "../agent/link-points.ts";
import { spawnWorker, type Worker, workerPath } from "../child.ts";
import type { BenchCase } from "../types.ts";
import { stopAll } from "./util.ts";

interface Report {
  report: { up: boolean; loss: number; rtt: number; jitter: number; samples: number };
  detail?: { answered: number; lost: number };
  elapsedMs: number;
}

export const agentMeasurement: BenchCase<LinkPointParams> = {
  name: "agent-measurement",
  kind: "agent",
  title: "agent-reported loss/RTT/jitter vs the lab's impairment",
  description:
    "The lab's two-sites topology (network only), impaired toward site B by `lossPercent` and `delayMs` (so a round trip " +
    "from A crosses the impairment once). The agent's own probe module (TunnelProber, what fills `tunnels` in its status " +
    "reports) runs in a worker in site A with a window of `probes` Tern UDP probes every `intervalMs` to an agent echo " +
    "responder in site B; the figures are its report. Baseline: `fping-link`, fping's measurement of the same point.",
  sizes: linkPoints,
  async run(p, ctx) {
    requireLab(["iptables", "gcc"]);
    const base = { case: "fping-link", params: p };
    let link: ImpairedLink | undefined;
    let a: Worker | undefined;
    let b: Worker | undefined;
    try {
      link = await upImpairedLink();
      await link.impair(p.lossPercent, p.delayMs);
      a = spawnWorker(workerPath("agent-prober"), { prefix: ["ip", "netns", "exec", link.nsA] });
      b = spawnWorker(workerPath("agent-prober"), { prefix: ["ip", "netns", "exec", link.nsB] });
      await Promise.all([a.ready, b.ready]);
      await b.call("respond", { addresses: [link.addrB] });
      const r = await a.call<Report>("measure", {
        source: link.addrA,
        target: link.addrB,
        intervalMs: p.intervalMs,
        probes: p.probes,
      });
      if (r.report.samples === 0) throw new Error("the prober recorded no probes");
      ctx.log(
        `agent-measurement ${describePoint(p)}: loss ${r.report.loss} %, rtt ${r.report.rtt} ms, jitter ${r.report.jitter} ms over ${r.report.samples}`,
      );
      return {
        figures: [
          {
            key: "loss",
            label: `reported loss (${describePoint(p)})`,
            value: r.report.loss,
            unit: "%",
            better: "lower",
            baseline: { ...base, key: "loss" },
          },
          {
            key: "rtt",
            label: `reported RTT (${describePoint(p)})`,
            value: r.report.rtt,
            unit: "ms",
            better: "lower",
            baseline: { ...base, key: "rtt" },
          },
          {
            key: "jitter",
            label: `reported jitter (${describePoint(p)})`,
            value: r.report.jitter,
            unit: "ms",
            better: "lower",
            baseline: { ...base, key: "jitter" },
          },
        ],
        notes: [
          `loss error vs applied: ${(r.report.loss - p.lossPercent).toFixed(2)} points (target ±2)`,
          ...(p.delayMs > 0
            ? [`RTT − applied delay: ${(r.report.rtt - p.delayMs).toFixed(2)} ms (target ±3; includes the link's own RTT)`]
            : []),
        ],
        details: { applied: { lossPercent: p.lossPercent, delayMs: p.delayMs }, ...r },
      };
    } finally {
      await stopAll(a, b);
      await link?.down();
    }
  },
};
