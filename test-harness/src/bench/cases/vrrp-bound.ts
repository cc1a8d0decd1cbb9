/**
 * Baseline of agent-failover: the VRRPv3 protocol's own failover time, computed
 * (RFC 5798 §6.1): a backup declares the master down after
 * Master_Down_Interval = 3 × Master_Adver_Interval + Skew_Time, with
 * Skew_Time = ((256 − Priority) × Master_Adver_Interval) / 256 of the backup.
 * No implementation can take over sooner after a silent master loss.
 */
import type { BenchCase, Params } from "../types.ts";

export interface VrrpBoundParams extends Params {
  advertIntervalMs: number;
  backupPriority: number;
}

export function masterDownMs(p: VrrpBoundParams): number {
  return 3 * p.advertIntervalMs + ((256 - p.backupPriority) * p.advertIntervalMs) / 256;
}

export const vrrpBound: BenchCase<VrrpBoundParams> = {
  name: "vrrp-bound",
  kind: "baseline",
  title: "VRRPv3 master-down interval (computed)",
  description:
    "Computed, not measured: RFC 5798's Master_Down_Interval = 3 × advert interval + skew, skew = (256 − backup " +
    "priority) × advert interval / 256. The time a backup waits after the last advertisement before it takes over.",
  sizes: () => [{ advertIntervalMs: 100, backupPriority: 100 }],
  async run(p) {
    return {
      figures: [{ key: "master-down-ms", label: "master-down interval", value: masterDownMs(p), unit: "ms", better: "lower" }],
    };
  },
};
