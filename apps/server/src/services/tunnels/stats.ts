/**
 * `GET /tunnels/{id}/stats`: the samples both ends of a tunnel reported over a
 * time range (default: the last hour). A range is at most MAX_RANGE_DAYS; when
 * it holds more than `maxPoints` samples per end, each end's samples are
 * averaged over equal time buckets (`date_bin`) so a week's worth is a chart,
 * not 120,000 rows. The aggregation runs in the database.
 */
import type { TunnelSample, TunnelStats } from "@tern/protocol";
import { sql } from "kysely";
import { invalidField, notFound } from "../../http/errors.ts";
import type { ServiceCtx } from "../context.ts";
import { resolveRange, tunnelRetention } from "../statistics/range.ts";
import { rollupMarks } from "../statistics/rollup.ts";
import { statisticsSettings } from "../statistics/settings.ts";
import { tierPieces } from "../statistics/sources.ts";
import { tunnelSteps } from "../statistics/tunnel-history.ts";

export const MAX_RANGE_DAYS = 31;
export const DEFAULT_RANGE_MS = 3_600_000;
export const DEFAULT_MAX_POINTS = 1000;

export interface TunnelStatsQuery {
  from?: string;
  to?: string;
  /** Points per end at most (10–10000). */
  maxPoints?: number;
  /** Seconds per point: read from the statistics tiers instead (services/statistics/tunnel-history.ts). */
  step?: number;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export async function getTunnelStats(ctx: ServiceCtx, tunnelId: string, query: TunnelStatsQuery): Promise<TunnelStats> {
  const tunnel = await ctx.db
    .selectFrom("tunnels")
    .select("id")
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", tunnelId)
    .executeTakeFirst();
  if (!tunnel) throw notFound("tunnel");
  if (query.step !== undefined) return getTunnelStatsByStep(ctx, tunnelId, query);
  const to = query.to ? new Date(query.to) : new Date();
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_RANGE_MS);
  if (from.getTime() >= to.getTime()) throw invalidField("from", "from must be before to");
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000)
    throw invalidField("from", `a range is at most ${MAX_RANGE_DAYS} days`);
  const maxPoints = query.maxPoints ?? DEFAULT_MAX_POINTS;

  const range = ctx.db
    .selectFrom("tunnel_samples")
    .where("tunnel_id", "=", tunnelId)
    .where("at", ">=", from)
    .where("at", "<=", to);
  const counts = await range
    .select(["side", (eb) => eb.fn.countAll<string>().as("n")])
    .groupBy("side")
    .execute();
  const most = Math.max(0, ...counts.map((c) => Number(c.n)));

  let samples: TunnelSample[];
  let bucketSeconds: number | null = null;
  if (most <= maxPoints) {
    const rows = await range.select(["at", "side", "loss", "rtt", "jitter", "up"]).orderBy("at").orderBy("side").execute();
    samples = rows.map((r) => ({
      at: r.at.toISOString(),
      side: r.side.trim() as "a" | "b",
      loss: round(r.loss),
      rtt: round(r.rtt),
      jitter: round(r.jitter),
      up: r.up,
    }));
  } else {
    bucketSeconds = Math.ceil((to.getTime() - from.getTime()) / 1000 / maxPoints);
    const bucket = sql<Date>`date_bin(${`${bucketSeconds} seconds`}::interval, at, ${from.toISOString()}::timestamptz)`;
    const rows = await range
      .select([
        bucket.as("bucket"),
        "side",
        sql<number>`avg(loss)::float8`.as("loss"),
        sql<number>`avg(rtt)::float8`.as("rtt"),
        sql<number>`avg(jitter)::float8`.as("jitter"),
        sql<boolean>`bool_and(up)`.as("up"),
      ])
      // By position: the bucket expression's parameters would make a repeated expression a different one.
      .groupBy([sql`1`, sql`2`])
      .orderBy(sql`1`)
      .orderBy(sql`2`)
      .execute();
    samples = rows.map((r) => ({
      at: new Date(r.bucket).toISOString(),
      side: r.side.trim() as "a" | "b",
      loss: round(r.loss),
      rtt: round(r.rtt),
      jitter: round(r.jitter),
      up: r.up,
    }));
  }
  return { tunnelId, from: from.toISOString(), to: to.toISOString(), bucketSeconds, samples };
}

/** With `step`: the tier the step picks (raw samples, 1-minute or 1-hour roll-ups), each end's means per step. */
async function getTunnelStatsByStep(ctx: ServiceCtx, tunnelId: string, query: TunnelStatsQuery): Promise<TunnelStats> {
  const range = resolveRange(query, tunnelRetention(statisticsSettings(ctx.config)), new Date(), DEFAULT_RANGE_MS);
  const pieces = tierPieces(range.tier, await rollupMarks(ctx.db), range.from, range.to);
  const samples = await tunnelSteps(ctx.db, tunnelId, pieces, range.from, range.stepSeconds);
  return {
    tunnelId,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    bucketSeconds: range.stepSeconds,
    samples,
    tier: range.tier,
  };
}
