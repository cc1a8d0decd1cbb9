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

/** The reports of both ends, new ones only, polled every `everyMs` for `durationMs`. */
export async function sampleQuality(
  api: ApiClient,
  tunnelId: string,
  durationMs: number,
  everyMs = 2000,
): Promise<QualityReport[]> {
  const seen = new Map<string, QualityReport>();
  const end = Date.now() + durationMs;
  while (Date.now() < end) {
    for (const r of reportsOf(await getTunnel(api, tunnelId))) seen.set(`${r.side}|${r.at}`, r);
    await new Promise((res) => setTimeout(res, everyMs));
  }
  return [...seen.values()].sort((x, y) => x.at.localeCompare(y.at));
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
