/**
 * Organization-wide aggregates over a range (default: the last 24 hours):
 * top talkers (devices or interfaces by bytes moved) and worst tunnels (by
 * mean loss, RTT or jitter of both ends). Ranges of 6 hours or more are read
 * from the 1-hour roll-ups,
 * shorter ones from the 1-minute roll-ups (and the last minute's raw rows);
 * the range's start is rounded down to that tier's bucket, and from the
 * 1-hour tier the range ends with the last rolled-up hour.
 */
import type { TopTalkers, WorstTunnels } from "@tern/protocol";
import { sql } from "kysely";

import { inTransaction, type ServiceCtx } from "../context.ts";
import { deviceRetention, resolveRange, type TierRetention, tunnelRetention } from "./range.ts";
import { rollupMarks } from "./rollup.ts";
import { HOUR_MS, statisticsSettings } from "./settings.ts";
import { type Piece, tierPieces } from "./sources.ts";
import { tunnelSource } from "./tunnel-history.ts";

const DEFAULT_RANGE_MS = 24 * HOUR_MS;

/**
 * An organization-wide read of the roll-ups, with PostgreSQL's parallel workers (its default of 2 per query).
 * Tern's sessions plan without them (db/database.ts: a list page is short, and a worker started for each
 * cost more than it saved), but these reads scan every device's or tunnel's buckets of the range: without
 * workers top talkers took 131–136 ms instead of 84–86 and worst tunnels 193–194 instead of 118–119
 * (`statistics-query`, 10,000 devices, docs/bench.md). PGlite has no workers; the setting is harmless there.
 */
function withParallelWorkers<T>(ctx: ServiceCtx, read: (db: ServiceCtx["db"]) => Promise<T>): Promise<T> {
  return inTransaction(ctx, async (tx) => {
    await sql`set local max_parallel_workers_per_gather = 2`.execute(tx.db);
    return read(tx.db);
  });
}
export const MAX_LIMIT = 100;

export interface AggregateQuery {
  from?: string;
  to?: string;
  limit?: number;
}

async function aggregateRange(ctx: ServiceCtx, query: AggregateQuery, retention: TierRetention, now: Date) {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_RANGE_MS);
  const step = to.getTime() - from.getTime() >= 6 * HOUR_MS ? 3600 : 60;
  // The step picks the tier and aligns the start; the whole range is one bucket here.
  const range = resolveRange({ from: from.toISOString(), to: to.toISOString(), step }, retention, now, DEFAULT_RANGE_MS);
  const marks = await rollupMarks(ctx.db);
  // From the 1-hour tier, whole rolled-up hours only: the open hour from the minute tier would be up to 60 rows
  // per interface of the whole fleet, many times the day's hour rows. The answer's `to` says where it ends.
  if (range.tier === "1h")
    range.to = new Date(Math.max(range.from.getTime(), Math.min(range.to.getTime(), marks.hour?.getTime() ?? 0)));
  const pieces = tierPieces(range.tier, marks, range.from, range.to);
  return { range, pieces };
}

function interfaceSource(p: Piece, orgId: string) {
  const [table, time] = p.tier === "raw" ? ["stat_if_raw", "at"] : [`stat_if_${p.tier}`, "bucket"];
  return sql`select device_id, interface, rx_bytes, tx_bytes from ${sql.table(table)}
    where organization_id = ${orgId} and ${sql.ref(time)} >= ${p.from.toISOString()}::timestamptz and ${sql.ref(time)} < ${p.to.toISOString()}::timestamptz`;
}

export async function getTopTalkers(
  ctx: ServiceCtx,
  query: AggregateQuery & { by?: "device" | "interface" },
  now = new Date(),
): Promise<TopTalkers> {
  const by = query.by ?? "device";
  const { range, pieces } = await aggregateRange(ctx, query, deviceRetention(statisticsSettings(ctx.config)), now);
  const head = { from: range.from.toISOString(), to: range.to.toISOString(), tier: range.tier, by };
  if (pieces.length === 0) return { ...head, items: [] };
  const keys = by === "device" ? sql`device_id` : sql`device_id, interface`;
  const { rows } = await withParallelWorkers(ctx, (db) =>
    sql<{ device_id: string; name: string; interface: string | null; rx: string; tx: string }>`
    select top.device_id, d.name, top.interface, top.rx, top.tx from (
      select device_id, ${by === "device" ? sql`null::text` : sql`interface`} as interface,
        sum(rx_bytes)::text as rx, sum(tx_bytes)::text as tx, sum(rx_bytes + tx_bytes) as total
      from (${sql.join(
        pieces.map((p) => interfaceSource(p, ctx.org.id)),
        sql` union all `,
      )}) s group by ${keys} order by total desc limit ${query.limit ?? 10}
    ) top join devices d on d.id = top.device_id and d.organization_id = ${ctx.org.id}
    order by top.total desc`.execute(db),
  );
  return {
    ...head,
    items: rows.map((r) => ({
      deviceId: r.device_id,
      deviceName: r.name,
      interface: r.interface,
      rxBytes: Number(r.rx),
      txBytes: Number(r.tx),
      totalBytes: Number(r.rx) + Number(r.tx),
    })),
  };
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export async function getWorstTunnels(
  ctx: ServiceCtx,
  query: AggregateQuery & { by?: "loss" | "rtt" | "jitter" },
  now = new Date(),
): Promise<WorstTunnels> {
  const by = query.by ?? "loss";
  const { range, pieces } = await aggregateRange(ctx, query, tunnelRetention(statisticsSettings(ctx.config)), now);
  const head = { from: range.from.toISOString(), to: range.to.toISOString(), tier: range.tier, by };
  if (pieces.length === 0) return { ...head, items: [] };
  const { rows } = await withParallelWorkers(ctx, (db) =>
    sql<{
      tunnel_id: string;
      num: number;
      loss: number;
      rtt: number;
      jitter: number;
      up: number;
      samples: string;
    }>`
    select w.*, t.num from (
      select tunnel_id, (sum(loss_sum) / sum(samples))::float8 as loss, (sum(rtt_sum) / sum(samples))::float8 as rtt,
        (sum(jitter_sum) / sum(samples))::float8 as jitter, (100.0 * sum(up_samples) / sum(samples))::float8 as up,
        sum(samples)::text as samples
      from (${sql.join(
        pieces.map((p) => tunnelSource(p, { orgId: ctx.org.id })),
        sql` union all `,
      )}) s group by tunnel_id order by ${sql.ref(by)} desc, tunnel_id limit ${query.limit ?? 10}
    ) w join tunnels t on t.id = w.tunnel_id and t.organization_id = ${ctx.org.id}
    order by ${sql.ref(`w.${by}`)} desc, w.tunnel_id`.execute(db),
  );
  return {
    ...head,
    items: rows.map((r) => ({
      tunnelId: r.tunnel_id,
      num: r.num,
      loss: round(r.loss),
      rtt: round(r.rtt),
      jitter: round(r.jitter),
      upPercent: round(r.up),
      samples: Number(r.samples),
    })),
  };
}
