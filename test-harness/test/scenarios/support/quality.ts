/**
 * Tunnel quality as the API shows it (`GET /api/tunnels/{id}`, `quality.a`
 * and `quality.b`: loss, RTT and jitter each end measured over its probe
 * window). Each end reports about every status interval; a sampler keeps each
 * distinct report once.
 */
import type { Tunnel } from "@tern/protocol";
import type { ApiClient } from "../../../src/lab/control/index.ts";
import { getTunnel } from "./scenario-lab.ts";

export interface QualityReport {
  side: "a" | "b";
  at: string;
  loss: number;
  rtt: number;
  jitter: number;
  up: boolean;
  /** Probes the report's loss is over, and the time they cover. */
  samples: number;
  windowMs: number | null;
}

/**
 * The reports of both ends, new ones only, polled every `everyMs` for
 * `durationMs`; with `until`, polling goes on past `durationMs` until the
 * reports so far satisfy it or `maxMs` has passed.
 */
export async function sampleQuality(
  api: ApiClient,
  tunnelId: string,
  durationMs: number,
  opts: { everyMs?: number; until?: (reports: QualityReport[]) => boolean; maxMs?: number } = {},
): Promise<QualityReport[]> {
  const seen = new Map<string, QualityReport>();
  const start = Date.now();
  const sorted = () => [...seen.values()].sort((x, y) => x.at.localeCompare(y.at));
  for (;;) {
    for (const r of reportsOf(await getTunnel(api, tunnelId))) seen.set(`${r.side}|${r.at}`, r);
    const elapsed = Date.now() - start;
    if (elapsed >= durationMs && (!opts.until || elapsed >= (opts.maxMs ?? durationMs) || opts.until(sorted()))) break;
    await new Promise((res) => setTimeout(res, opts.everyMs ?? 2000));
  }
  return sorted();
}

export function reportsOf(t: Tunnel): QualityReport[] {
  return (["a", "b"] as const).flatMap((side) => {
    const q = t.quality[side];
    return q
      ? [{ side, at: q.at, loss: q.loss, rtt: q.rtt, jitter: q.jitter, up: q.up, samples: q.samples, windowMs: q.windowMs }]
      : [];
  });
}

export const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

export function summarize(reports: QualityReport[]): { reports: number; loss: number; rtt: number; jitter: number } {
  return {
    reports: reports.length,
    loss: mean(reports.map((r) => r.loss)),
    rtt: mean(reports.map((r) => r.rtt)),
    jitter: mean(reports.map((r) => r.jitter)),
  };
}

/**
 * Loss over windows that do not overlap, per end: from each end's first
 * report, the next report whose window starts after the previous one ends.
 * Every probe counts once and with the same weight (a mean of sliding
 * windows weighs the middle probes most: fewer effective samples).
 */
export function disjointLoss(reports: QualityReport[]): { probes: number; lost: number; loss: number; windows: number } {
  let probes = 0;
  let lost = 0;
  let windows = 0;
  for (const side of ["a", "b"] as const) {
    let end = Number.NEGATIVE_INFINITY;
    for (const r of reports.filter((x) => x.side === side)) {
      if (!r.windowMs || r.samples === 0) continue;
      const at = Date.parse(r.at);
      if (at - r.windowMs < end) continue;
      probes += r.samples;
      lost += Math.round((r.loss * r.samples) / 100);
      windows++;
      end = at;
    }
  }
  return { probes, lost, loss: probes === 0 ? Number.NaN : (100 * lost) / probes, windows };
}

/**
 * Probes needed for a loss estimate within `tolerance` points of a true loss
 * of `percent`, at `z` standard errors of the binomial (z = 4: one run in
 * about 16,000 falls outside by chance).
 */
export function probesForLoss(percent: number, tolerance: number, z = 4): number {
  const p = percent / 100;
  return Math.ceil((z * z * p * (1 - p)) / (tolerance / 100) ** 2);
}

/**
 * Distinct probes a set of reports stands on: per end, the first report's
 * window plus the probes sent between the first and the last report (at the
 * rate the window shows). Overlapping windows count each probe once.
 */
export function distinctProbes(reports: QualityReport[]): number {
  let total = 0;
  for (const side of ["a", "b"] as const) {
    const own = reports.filter((r) => r.side === side);
    if (own.length === 0) continue;
    const first = own[0]!;
    const last = own.at(-1)!;
    const rate = first.windowMs ? first.samples / first.windowMs : 0;
    total += first.samples + Math.round((Date.parse(last.at) - Date.parse(first.at)) * rate);
  }
  return total;
}
