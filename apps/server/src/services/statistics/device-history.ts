/**
 * `GET /devices/{id}/statistics`: a device's interfaces (rates and totals),
 * health and BGP/VRRP state changes over a range, re-bucketed to the step
 * from the tier it picks (range.ts, sources.ts). Rates are the bytes (packets)
 * counted in a step over the seconds the device reported in it: a device that
 * was away part of the step is not shown as slower.
 */
import type { DeviceStatistics, HealthPoint, InterfacePoint, StateChange } from "@tern/protocol";
import { type RawBuilder, sql } from "kysely";
import { notFound } from "../../http/errors.ts";
import type { ServiceCtx } from "../context.ts";
import { deviceRetention, type RangeQuery, resolveRange } from "./range.ts";
import { rollupMarks } from "./rollup.ts";
import { statisticsSettings } from "./settings.ts";
import { type Piece, tierPieces } from "./sources.ts";

const DEFAULT_RANGE_MS = 3_600_000;
const MAX_STATE_CHANGES = 1000;

const COUNTER_COLS = "seconds, rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_drops, tx_drops";

function interfaceSource(p: Piece, deviceId: string): RawBuilder<unknown> {
  const [table, time] = p.tier === "raw" ? ["stat_if_raw", "at"] : [`stat_if_${p.tier}`, "bucket"];
  return sql`select ${sql.raw(time)} as t, interface, ${sql.raw(COUNTER_COLS)} from ${sql.table(table)}
    where device_id = ${deviceId} and ${sql.ref(time)} >= ${p.from.toISOString()}::timestamptz and ${sql.ref(time)} < ${p.to.toISOString()}::timestamptz`;
}

const HEALTH_RAW_COLS =
  "samples, cpu * samples as cpu_sum, cpu_max, memory * samples as memory_sum, disk * samples as disk_sum, uptime as uptime_max, temperature * samples as temperature_sum, case when temperature is null then 0 else samples end as temperature_samples";
const HEALTH_ROLLUP_COLS = "samples, cpu_sum, cpu_max, memory_sum, disk_sum, uptime_max, temperature_sum, temperature_samples";

function healthSource(p: Piece, deviceId: string): RawBuilder<unknown> {
  const [table, time, cols] =
    p.tier === "raw" ? ["stat_health_raw", "at", HEALTH_RAW_COLS] : [`stat_health_${p.tier}`, "bucket", HEALTH_ROLLUP_COLS];
  return sql`select ${sql.raw(time)} as t, ${sql.raw(cols)} from ${sql.table(table)}
    where device_id = ${deviceId} and ${sql.ref(time)} >= ${p.from.toISOString()}::timestamptz and ${sql.ref(time)} < ${p.to.toISOString()}::timestamptz`;
}

export const unionAll = (parts: RawBuilder<unknown>[]) => sql.join(parts, sql` union all `);

const n = (v: string | number | null) => (v === null ? null : Number(v));
const round = (v: number) => Math.round(v * 1000) / 1000;
const rate = (v: string | null, seconds: number, factor = 1) =>
  v === null || seconds <= 0 ? null : round((Number(v) * factor) / seconds);

interface IfRow {
  b: Date;
  interface: string;
  seconds: number;
  rx_bytes: string;
  tx_bytes: string;
  rx_packets: string | null;
  tx_packets: string | null;
  rx_errors: string | null;
  tx_errors: string | null;
  rx_drops: string | null;
  tx_drops: string | null;
}

export async function getDeviceStatistics(
  ctx: ServiceCtx,
  deviceId: string,
  query: RangeQuery,
  now = new Date(),
): Promise<DeviceStatistics> {
  const settings = statisticsSettings(ctx.config);
  const device = await ctx.db
    .selectFrom("devices")
    .select("id")
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", deviceId)
    .executeTakeFirst();
  if (!device) throw notFound("device");
  const range = resolveRange(query, deviceRetention(settings), now, DEFAULT_RANGE_MS);
  const pieces = tierPieces(range.tier, await rollupMarks(ctx.db), range.from, range.to);
  const step = sql`${`${range.stepSeconds} seconds`}::interval`;
  const origin = sql`${range.from.toISOString()}::timestamptz`;

  const ifRows = (
    await sql<IfRow>`select date_bin(${step}, t, ${origin}) as b, interface, sum(seconds)::float8 as seconds,
      sum(rx_bytes)::text as rx_bytes, sum(tx_bytes)::text as tx_bytes, sum(rx_packets)::text as rx_packets,
      sum(tx_packets)::text as tx_packets, sum(rx_errors)::text as rx_errors, sum(tx_errors)::text as tx_errors,
      sum(rx_drops)::text as rx_drops, sum(tx_drops)::text as tx_drops
      from (${unionAll(pieces.map((p) => interfaceSource(p, deviceId)))}) s
      group by 1, 2 order by 2, 1`.execute(ctx.db)
  ).rows;
  const interfaces = new Map<string, InterfacePoint[]>();
  for (const r of ifRows) {
    const points = interfaces.get(r.interface) ?? [];
    interfaces.set(r.interface, points);
    points.push({
      at: new Date(r.b).toISOString(),
      rxBps: rate(r.rx_bytes, r.seconds, 8) ?? 0,
      txBps: rate(r.tx_bytes, r.seconds, 8) ?? 0,
      rxPps: rate(r.rx_packets, r.seconds),
      txPps: rate(r.tx_packets, r.seconds),
      rxBytes: Number(r.rx_bytes),
      txBytes: Number(r.tx_bytes),
      rxErrors: n(r.rx_errors),
      txErrors: n(r.tx_errors),
      rxDrops: n(r.rx_drops),
      txDrops: n(r.tx_drops),
    });
  }

  const healthRows = (
    await sql<{
      b: Date;
      samples: string;
      cpu: number;
      cpu_max: number;
      memory: number;
      disk: number;
      uptime: number;
      temperature: number | null;
    }>`select date_bin(${step}, t, ${origin}) as b, sum(samples)::text as samples,
      (sum(cpu_sum) / nullif(sum(samples), 0))::float8 as cpu, max(cpu_max)::float8 as cpu_max,
      (sum(memory_sum) / nullif(sum(samples), 0))::float8 as memory, (sum(disk_sum) / nullif(sum(samples), 0))::float8 as disk,
      max(uptime_max)::float8 as uptime, (sum(temperature_sum) / nullif(sum(temperature_samples), 0))::float8 as temperature
      from (${unionAll(pieces.map((p) => healthSource(p, deviceId)))}) s
      group by 1 order by 1`.execute(ctx.db)
  ).rows;
  const health: HealthPoint[] = healthRows.map((r) => ({
    at: new Date(r.b).toISOString(),
    cpuPercent: round(r.cpu ?? 0),
    cpuMaxPercent: round(r.cpu_max ?? 0),
    memoryPercent: round(r.memory ?? 0),
    diskPercent: round(r.disk ?? 0),
    uptimeSeconds: round(r.uptime ?? 0),
    temperatureC: r.temperature === null ? null : round(r.temperature),
  }));

  const changes = await ctx.db
    .selectFrom("stat_state_changes")
    .select(["at", "kind", "key", "from_state", "to_state"])
    .where("device_id", "=", deviceId)
    .where("organization_id", "=", ctx.org.id)
    .where("at", ">=", range.from)
    .where("at", "<", range.to)
    .orderBy("at")
    .limit(MAX_STATE_CHANGES)
    .execute();
  const stateChanges: StateChange[] = changes.map((c) => ({
    at: c.at.toISOString(),
    kind: c.kind,
    key: c.key,
    from: c.from_state,
    to: c.to_state,
  }));

  return {
    deviceId,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    stepSeconds: range.stepSeconds,
    tier: range.tier,
    interfaces: [...interfaces].map(([name, points]) => ({ interface: name, points })),
    health,
    stateChanges,
  };
}
