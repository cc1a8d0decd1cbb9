/**
 * Roll-ups, computed incrementally: each run takes the closed minutes (hours)
 * after the last one done, aggregates only their rows into the coarser table
 * (`INSERT … SELECT … GROUP BY … ON CONFLICT DO UPDATE` adding sums and
 * keeping maxima) and moves the mark in `stat_rollup_progress`, in the same
 * transaction. Minutes come from the raw tables (and `tunnel_samples`), hours
 * from the minute tables. A minute is closed ROLLUP_LAG_MS after its end, so
 * rows still waiting in a writer's buffer are in before it is rolled up.
 * Buckets are cut in UTC from a fixed origin (`date_bin`), whatever the
 * session's time zone.
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { HOUR_MS } from "./settings.ts";

export const ROLLUP_LAG_MS = 15_000;
const MINUTE_MS = 60_000;
/** At most this much is rolled up per run (a backlog is worked off over several runs). */
const MAX_MINUTES_PER_RUN = 120;
const MAX_HOURS_PER_RUN = 48;
export const BUCKET_ORIGIN = "2000-01-01T00:00:00Z";

type Merge = "sum" | "nsum" | "max";
interface Agg {
  col: string;
  expr: string;
  merge: Merge;
}

const COUNTERS = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "rx_errors", "tx_errors", "rx_drops", "tx_drops"];

function rollupSql(target: string, keys: string[], bucket: string, from: string, time: string, aggs: Agg[], lo: Date, hi: Date) {
  const merge = (a: Agg) =>
    a.merge === "sum"
      ? `${a.col} = ${target}.${a.col} + excluded.${a.col}`
      : a.merge === "nsum"
        ? `${a.col} = coalesce(${target}.${a.col} + excluded.${a.col}, ${target}.${a.col}, excluded.${a.col})`
        : `${a.col} = greatest(${target}.${a.col}, excluded.${a.col})`;
  const groupBy = keys.map((_, i) => i + 2).join(", ");
  return sql`insert into ${sql.raw(target)} (bucket, ${sql.raw(keys.join(", "))}, ${sql.raw(aggs.map((a) => a.col).join(", "))})
    select date_bin(${sql.raw(`'${bucket}'`)}::interval, ${sql.raw(time)}, ${BUCKET_ORIGIN}::timestamptz),
      ${sql.raw(keys.map((k) => (k === "side" ? "trim(side)" : k)).join(", "))}, ${sql.raw(aggs.map((a) => a.expr).join(", "))}
    from ${sql.raw(from)} where ${sql.raw(time)} >= ${lo.toISOString()}::timestamptz and ${sql.raw(time)} < ${hi.toISOString()}::timestamptz
    group by 1, ${sql.raw(groupBy)}
    on conflict (${sql.raw(keys.filter((k) => k !== "organization_id").join(", "))}, bucket)
    do update set ${sql.raw(aggs.map(merge).join(", "))}`;
}

const IF_FROM_RAW: Agg[] = [
  { col: "samples", expr: "count(*)", merge: "sum" },
  { col: "seconds", expr: "sum(seconds)", merge: "sum" },
  ...COUNTERS.map((c): Agg => ({ col: c, expr: `sum(${c})`, merge: c.endsWith("bytes") ? "sum" : "nsum" })),
];
const IF_FROM_MINUTES: Agg[] = IF_FROM_RAW.map((a) => ({ ...a, expr: `sum(${a.col})` }));

const HEALTH_FROM_RAW: Agg[] = [
  { col: "samples", expr: "sum(samples)", merge: "sum" },
  { col: "cpu_sum", expr: "sum(cpu * samples)", merge: "sum" },
  { col: "cpu_max", expr: "max(cpu_max)", merge: "max" },
  { col: "memory_sum", expr: "sum(memory * samples)", merge: "sum" },
  { col: "memory_max", expr: "max(memory)", merge: "max" },
  { col: "disk_sum", expr: "sum(disk * samples)", merge: "sum" },
  { col: "disk_max", expr: "max(disk)", merge: "max" },
  { col: "uptime_max", expr: "max(uptime)", merge: "max" },
  { col: "temperature_sum", expr: "sum(temperature * samples)", merge: "nsum" },
  { col: "temperature_samples", expr: "coalesce(sum(samples) filter (where temperature is not null), 0)", merge: "sum" },
  { col: "temperature_max", expr: "max(temperature)", merge: "max" },
];
const HEALTH_FROM_MINUTES: Agg[] = HEALTH_FROM_RAW.map((a) => ({ ...a, expr: `${a.merge === "max" ? "max" : "sum"}(${a.col})` }));

const TUNNEL_FROM_RAW: Agg[] = [
  { col: "samples", expr: "count(*)", merge: "sum" },
  { col: "up_samples", expr: "count(*) filter (where up)", merge: "sum" },
  { col: "loss_sum", expr: "sum(loss)", merge: "sum" },
  { col: "loss_max", expr: "max(loss)", merge: "max" },
  { col: "rtt_sum", expr: "sum(rtt)", merge: "sum" },
  { col: "rtt_max", expr: "max(rtt)", merge: "max" },
  { col: "jitter_sum", expr: "sum(jitter)", merge: "sum" },
  { col: "jitter_max", expr: "max(jitter)", merge: "max" },
];
const TUNNEL_FROM_MINUTES: Agg[] = TUNNEL_FROM_RAW.map((a) => ({ ...a, expr: `${a.merge === "max" ? "max" : "sum"}(${a.col})` }));

/** Tunnel samples with their organization (the tunnel's); samples of deleted tunnels are not rolled up. */
const TUNNEL_SAMPLES = "(select s.*, t.organization_id from tunnel_samples s join tunnels t on t.id = s.tunnel_id) s";

async function progress(db: Db, name: string): Promise<Date | null> {
  const row = await db.selectFrom("stat_rollup_progress").select("done_until").where("name", "=", name).executeTakeFirst();
  return row ? new Date(row.done_until) : null;
}

async function setProgress(db: Db, name: string, at: Date): Promise<void> {
  await db
    .insertInto("stat_rollup_progress")
    .values({ name, done_until: at })
    .onConflict((oc) => oc.column("name").doUpdateSet({ done_until: at }))
    .execute();
}

const floorTo = (t: number, width: number) => Math.floor(t / width) * width;

/**
 * Rolls the closed minutes since the last run into the 1-minute tables. The
 * first run starts `startBackMs` ago (the raw retention). Returns the range done.
 */
export async function rollUpMinutes(db: Db, now: Date, startBackMs: number): Promise<{ from: Date; to: Date } | null> {
  const closed = floorTo(now.getTime() - ROLLUP_LAG_MS, MINUTE_MS);
  const from = (await progress(db, "minute")) ?? new Date(floorTo(now.getTime() - startBackMs, MINUTE_MS));
  const to = new Date(Math.min(closed, from.getTime() + MAX_MINUTES_PER_RUN * MINUTE_MS));
  if (to <= from) return null;
  const m = "1 minute";
  await rollupSql(
    "stat_if_1m",
    ["organization_id", "device_id", "interface"],
    m,
    "stat_if_raw",
    "at",
    IF_FROM_RAW,
    from,
    to,
  ).execute(db);
  await rollupSql(
    "stat_health_1m",
    ["organization_id", "device_id"],
    m,
    "stat_health_raw",
    "at",
    HEALTH_FROM_RAW,
    from,
    to,
  ).execute(db);
  await rollupSql(
    "stat_tunnel_1m",
    ["organization_id", "tunnel_id", "side"],
    m,
    TUNNEL_SAMPLES,
    "at",
    TUNNEL_FROM_RAW,
    from,
    to,
  ).execute(db);
  await setProgress(db, "minute", to);
  return { from, to };
}

/** Rolls the hours the minute tables hold whole (up to the minute mark) into the 1-hour tables. */
export async function rollUpHours(db: Db): Promise<{ from: Date; to: Date } | null> {
  const minuteMark = await progress(db, "minute");
  if (!minuteMark) return null;
  const closed = floorTo(minuteMark.getTime(), HOUR_MS);
  const from = (await progress(db, "hour")) ?? (await firstMinuteHour(db)) ?? new Date(closed);
  const to = new Date(Math.min(closed, from.getTime() + MAX_HOURS_PER_RUN * HOUR_MS));
  if (to <= from) return null;
  const h = "1 hour";
  await rollupSql(
    "stat_if_1h",
    ["organization_id", "device_id", "interface"],
    h,
    "stat_if_1m",
    "bucket",
    IF_FROM_MINUTES,
    from,
    to,
  ).execute(db);
  await rollupSql(
    "stat_health_1h",
    ["organization_id", "device_id"],
    h,
    "stat_health_1m",
    "bucket",
    HEALTH_FROM_MINUTES,
    from,
    to,
  ).execute(db);
  await rollupSql(
    "stat_tunnel_1h",
    ["organization_id", "tunnel_id", "side"],
    h,
    "stat_tunnel_1m",
    "bucket",
    TUNNEL_FROM_MINUTES,
    from,
    to,
  ).execute(db);
  await setProgress(db, "hour", to);
  return { from, to };
}

/** The hour of the oldest minute roll-up, where the first hour roll-up starts. */
async function firstMinuteHour(db: Db): Promise<Date | null> {
  const { rows } = await sql<{ first: Date | null }>`select least(
      (select min(bucket) from stat_if_1m), (select min(bucket) from stat_health_1m), (select min(bucket) from stat_tunnel_1m)) as first`.execute(
    db,
  );
  const first = rows[0]?.first;
  return first ? new Date(floorTo(new Date(first).getTime(), HOUR_MS)) : null;
}

/** The marks readers use: minute and hour roll-ups are complete before these times (null: never ran). */
export async function rollupMarks(db: Db): Promise<{ minute: Date | null; hour: Date | null }> {
  const rows = await db.selectFrom("stat_rollup_progress").select(["name", "done_until"]).execute();
  const get = (n: string) => {
    const r = rows.find((x) => x.name === n);
    return r ? new Date(r.done_until) : null;
  };
  return { minute: get("minute"), hour: get("hour") };
}
