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
    return q ? [{ side, at: q.at, loss: q.loss, rtt: q.rtt, jitter: q.jitter, up: q.up }] : [];
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
