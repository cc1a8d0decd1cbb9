/** Baseline of agent-measurement: fping's own loss/RTT/jitter over the same impaired lab link. */
import { run } from "@tern/netlab";
import { type ImpairedLink, upImpairedLink } from "../agent/impaired-link.ts";
import { requireLab } from "../agent/lab.ts";
import { describePoint, type LinkPointParams, linkPoints, linkStats, parseFpingCount } from "../agent/link-points.ts";
import type { BenchCase } from "../types.ts";

export const fpingLink: BenchCase<LinkPointParams> = {
  name: "fping-link",
  kind: "baseline",
  title: "fping over an impaired lab link",
  description:
    "The lab's two-sites topology (network only); the lab impairs the packets toward site B by `lossPercent` and " +
    "`delayMs`; `fping -C probes -p intervalMs -t 1000` from site A to site B's WAN address. Loss, mean RTT and jitter " +
    "(mean absolute difference of consecutive answered RTTs, the agent's definition) of its per-probe results.",
  sizes: linkPoints,
  async run(p) {
    requireLab(["iptables", "gcc"]);
    let link: ImpairedLink | undefined;
    try {
      link = await upImpairedLink();
      await link.impair(p.lossPercent, p.delayMs);
      const r = await run(
        [
          ..."ip netns exec".split(" "),
          link.nsA,
          "fping",
          "-C",
          String(p.probes),
          "-p",
          String(p.intervalMs),
          "-t",
          "1000",
          "-q",
          "-S",
          link.addrA,
          link.addrB,
        ],
        { allowFailure: true, timeoutMs: p.probes * p.intervalMs + 30_000 },
      );
      const s = linkStats(parseFpingCount(`${r.stdout}\n${r.stderr}`, link.addrB));
      return {
        figures: [
          { key: "loss", label: `fping loss (${describePoint(p)})`, value: s.lossPercent, unit: "%", better: "lower" },
          { key: "rtt", label: `fping mean RTT (${describePoint(p)})`, value: s.rttMs, unit: "ms", better: "lower" },
          { key: "jitter", label: `fping jitter (${describePoint(p)})`, value: s.jitterMs, unit: "ms", better: "lower" },
        ],
        details: { answered: s.answered, probes: p.probes },
      };
    } finally {
      await link?.down();
    }
  },
};
