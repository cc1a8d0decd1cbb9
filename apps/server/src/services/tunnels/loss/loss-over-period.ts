/**
 * Loss of one tunnel end over any period, recomputed from the raw probe
 * counters its agent reports (`tunnel_samples.sent` / `received`, cumulative
 * per target) instead of averaging the agent's window percentages: the sum of
 * Δlost over the sum of Δsent between consecutive samples inside the period.
 * A counter that went down (the agent restarted, or switched to another
 * target) starts a new run; the pair across the reset is not counted, so no
 * probe is counted twice or made up. Samples without counts (older agents)
 * are skipped.
 */
import type { Db } from "../../../db/schema.ts";

export interface LossOverPeriod {
  /** Probes finalised (answered or lost) in the period. */
  sent: number;
  lost: number;
  /** lost / sent in percent; null when no probe was counted. */
  lossPercent: number | null;
  /** Counter restarts seen in the period. */
  resets: number;
}

/** Loss of the tunnel's `side` end between `from` and `to`, from the organization's samples only. */
export async function lossOverPeriod(
  db: Db,
  orgId: string,
  tunnelId: string,
  side: "a" | "b",
  range: { from: Date; to: Date },
): Promise<LossOverPeriod> {
  const rows = await db
    .selectFrom("tunnel_samples")
    .innerJoin("tunnels", "tunnels.id", "tunnel_samples.tunnel_id")
    .select(["tunnel_samples.sent", "tunnel_samples.received"])
    .where("tunnels.organization_id", "=", orgId)
    .where("tunnel_samples.tunnel_id", "=", tunnelId)
    .where("tunnel_samples.side", "=", side)
    .where("tunnel_samples.at", ">=", range.from)
    .where("tunnel_samples.at", "<=", range.to)
    .where("tunnel_samples.sent", "is not", null)
    .orderBy("tunnel_samples.at")
    .execute();
  return lossFromCounters(rows.map((r) => ({ sent: Number(r.sent), received: Number(r.received) })));
}

/** The arithmetic of lossOverPeriod over counter readings in time order (pure). */
export function lossFromCounters(readings: readonly { sent: number; received: number }[]): LossOverPeriod {
  let sent = 0;
  let lost = 0;
  let resets = 0;
  for (let i = 1; i < readings.length; i++) {
    const prev = readings[i - 1]!;
    const cur = readings[i]!;
    if (cur.sent < prev.sent || cur.received < prev.received) {
      resets++;
      continue;
    }
    sent += cur.sent - prev.sent;
    lost += cur.sent - cur.received - (prev.sent - prev.received);
  }
  return { sent, lost, lossPercent: sent === 0 ? null : (lost / sent) * 100, resets };
}
