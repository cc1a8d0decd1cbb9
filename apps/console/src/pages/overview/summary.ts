/** The figures of the fleet overview computed in the browser (the device and tunnel counts come from the server). */
import type { Notification } from "@tern/client";

export const TUNNEL_STATUSES = ["Connected", "Not Connected", "Pending", "N/A"] as const;

export const SEVERITIES = ["critical", "warning", "info"] as const;

export function openNotificationCounts(notifications: Notification[]) {
  const counts = { critical: 0, warning: 0, info: 0 };
  for (const n of notifications) if (!n.resolved) counts[n.severity]++;
  return counts;
}

export interface TunnelFigures {
  loss: number;
  rtt: number;
  jitter: number;
}

/** Averages of a tunnel's recent samples (both sides), or null without samples. */
export function averageFigures(samples: { loss: number; rtt: number; jitter: number }[]): TunnelFigures | null {
  if (samples.length === 0) return null;
  const sum = samples.reduce((a, s) => ({ loss: a.loss + s.loss, rtt: a.rtt + s.rtt, jitter: a.jitter + s.jitter }), {
    loss: 0,
    rtt: 0,
    jitter: 0,
  });
  return { loss: sum.loss / samples.length, rtt: sum.rtt / samples.length, jitter: sum.jitter / samples.length };
}

/** Worst first: by loss, then RTT, then jitter. */
export function worstFirst<T extends { figures: TunnelFigures }>(rows: T[]): T[] {
  return [...rows].sort(
    (a, b) => b.figures.loss - a.figures.loss || b.figures.rtt - a.figures.rtt || b.figures.jitter - a.figures.jitter,
  );
}
