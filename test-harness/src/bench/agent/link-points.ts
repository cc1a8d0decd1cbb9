/** The impairment points agent-measurement and its fping baseline measure, and the statistics both report. */
import type { BenchMode, Params } from "../types.ts";

export interface LinkPointParams extends Params {
  lossPercent: number;
  delayMs: number;
  /** Probe interval (the agent's minimum, 100 ms) and count (= the agent's window). */
  intervalMs: number;
  probes: number;
}

export function linkPoints(mode: BenchMode): LinkPointParams[] {
  if (mode === "quick")
    return [
      { lossPercent: 0, delayMs: 0, intervalMs: 100, probes: 100 },
      { lossPercent: 10, delayMs: 30, intervalMs: 100, probes: 100 },
    ];
  return [
    [0, 0],
    [1, 0],
    [5, 0],
    [20, 0],
    [0, 30],
    [0, 100],
    [5, 30],
  ].map(([lossPercent, delayMs]) => ({ lossPercent: lossPercent!, delayMs: delayMs!, intervalMs: 100, probes: 300 }));
}

export function describePoint(p: LinkPointParams): string {
  return `applied ${p.lossPercent} %, +${p.delayMs} ms`;
}

/**
 * Loss, mean RTT and jitter of per-probe results (null = lost) with the
 * agent's definitions (apps/agent/src/probes/window.ts): jitter is the mean
 * absolute difference of consecutive answered RTTs.
 */
export function linkStats(rtts: (number | null)[]): { lossPercent: number; rttMs: number; jitterMs: number; answered: number } {
  const answered = rtts.filter((r): r is number => r !== null);
  let diff = 0;
  for (let i = 1; i < answered.length; i++) diff += Math.abs(answered[i]! - answered[i - 1]!);
  return {
    lossPercent: rtts.length === 0 ? 0 : ((rtts.length - answered.length) / rtts.length) * 100,
    rttMs: answered.length === 0 ? 0 : answered.reduce((a, b) => a + b, 0) / answered.length,
    jitterMs: answered.length < 2 ? 0 : diff / (answered.length - 1),
    answered: answered.length,
  };
}

/** Per-probe RTTs from `fping -C N -q` output (`host : 0.05 0.06 - …`, on stderr). */
export function parseFpingCount(output: string, host: string): (number | null)[] {
  const line = output.split("\n").find((l) => l.startsWith(`${host} `));
  if (!line) throw new Error(`fping printed no result for ${host}: ${output.trim().slice(0, 300)}`);
  return line
    .slice(line.indexOf(":") + 1)
    .trim()
    .split(/\s+/)
    .map((v) => (v === "-" ? null : Number(v)));
}
