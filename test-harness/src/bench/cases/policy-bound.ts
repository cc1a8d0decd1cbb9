/**
 * Baseline of agent-path-failover, computed: when a window-based prober can
 * first see a degraded link at all. After the degradation, probes go out every
 * `probeIntervalMs`; each is lost with probability p = lossPercent/100, so
 * the first lost one is sent on average interval × (1/p − 1) + interval/2
 * after the degradation began (the phase is uniform), and counts as lost
 * `timeoutMs` later. With a loss threshold below one probe in the window,
 * that first loss is all the policy needs: no prober with these settings
 * can react sooner on average.
 */
import type { BenchCase, Params } from "../types.ts";

export interface PolicyBoundParams extends Params {
  probeIntervalMs: number;
  timeoutMs: number;
  lossPercent: number;
}

export function firstLossDetectedMs(p: PolicyBoundParams): number {
  const q = p.lossPercent / 100;
  return p.probeIntervalMs * (1 / q - 1) + p.probeIntervalMs / 2 + p.timeoutMs;
}

export const policyBound: BenchCase<PolicyBoundParams> = {
  name: "policy-bound",
  kind: "baseline",
  title: "expected first-loss detection of a prober (computed)",
  description:
    "Computed, not measured: the mean time from a link starting to lose `lossPercent` % of probes to the first probe " +
    "declared lost, for probes every `probeIntervalMs` with a `timeoutMs` time-out: interval × (1/p − 1) + interval/2 + " +
    "time-out.",
  sizes: () => [{ probeIntervalMs: 500, timeoutMs: 1000, lossPercent: 50 }],
  async run(p) {
    return {
      figures: [
        {
          key: "detect-ms",
          label: "expected first lost probe detected",
          value: firstLossDetectedMs(p),
          unit: "ms",
          better: "lower",
        },
      ],
    };
  },
};
