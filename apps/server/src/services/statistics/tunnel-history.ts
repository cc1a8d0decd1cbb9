/**
 * Tunnel figures from the statistics tiers: `GET /tunnels/{id}/stats` with a
 * `step` (services/tunnels/stats.ts answers without one, as before) and the
 * organization's worst tunnels. The raw tier is `tunnel_samples`.
 */
import type { TunnelSample } from "@tern/protocol";
import { type RawBuilder, sql } from "kysely";
import type { Piece } from "./sources.ts";

const TUNNEL_ROLLUP_COLS = "tunnel_id, side, samples, up_samples, loss_sum, rtt_sum, jitter_sum";
const TUNNEL_RAW_COLS =
  "s.tunnel_id, trim(s.side) as side, 1 as samples, s.up::int as up_samples, s.loss as loss_sum, s.rtt as rtt_sum, s.jitter as jitter_sum";

/** One piece of tunnel figures, of one tunnel or of every tunnel of an organization. */
export function tunnelSource(p: Piece, filter: { tunnelId: string } | { orgId: string }): RawBuilder<unknown> {
  const lo = sql`${p.from.toISOString()}::timestamptz`;
  const hi = sql`${p.to.toISOString()}::timestamptz`;
  if (p.tier === "raw") {
    const where =
      "tunnelId" in filter
        ? sql`s.tunnel_id = ${filter.tunnelId}`
        : sql`s.tunnel_id in (select id from tunnels where organization_id = ${filter.orgId})`;
    return sql`select s.at as t, ${sql.raw(TUNNEL_RAW_COLS)} from tunnel_samples s where ${where} and s.at >= ${lo} and s.at < ${hi}`;
  }
  const where = "tunnelId" in filter ? sql`tunnel_id = ${filter.tunnelId}` : sql`organization_id = ${filter.orgId}`;
  return sql`select bucket as t, ${sql.raw(TUNNEL_ROLLUP_COLS)} from ${sql.table(`stat_tunnel_${p.tier}`)}
    where ${where} and bucket >= ${lo} and bucket < ${hi}`;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** Both ends' means per step (`up`: up for every sample of the step). */
export async function tunnelSteps(
  db: Parameters<RawBuilder<unknown>["execute"]>[0],
  tunnelId: string,
  pieces: Piece[],
  from: Date,
  stepSeconds: number,
): Promise<TunnelSample[]> {
  const { rows } = await sql<{ b: Date; side: string; loss: number; rtt: number; jitter: number; up: boolean }>`
    select date_bin(${`${stepSeconds} seconds`}::interval, t, ${from.toISOString()}::timestamptz) as b, side,
      (sum(loss_sum) / sum(samples))::float8 as loss, (sum(rtt_sum) / sum(samples))::float8 as rtt,
      (sum(jitter_sum) / sum(samples))::float8 as jitter, sum(up_samples) = sum(samples) as up
    from (${sql.join(
      pieces.map((p) => tunnelSource(p, { tunnelId })),
      sql` union all `,
    )}) s group by 1, 2 order by 1, 2`.execute(db);
  return rows.map((r) => ({
    at: new Date(r.b).toISOString(),
    side: r.side.trim() as "a" | "b",
    loss: round(r.loss),
    rtt: round(r.rtt),
    jitter: round(r.jitter),
    up: r.up,
  }));
}
