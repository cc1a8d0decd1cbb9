/**
 * Statistics history (docs/server.md "Statistics history"). Every table is
 * PARTITIONED BY RANGE on its time column; the partitions themselves are made
 * ahead of time and dropped whole when expired by the server
 * (services/statistics/partitions.ts), since their sizes and retention are
 * settings. Three tiers per series:
 * - `stat_if_raw`, `stat_health_raw`: what the status writer stores, one row
 *   per interface (counter deltas over `seconds`, never rates: sums of deltas
 *   and seconds roll up exactly) or device (health means) per raw interval;
 * - `*_1m`, `*_1h`: roll-ups per closed minute / hour (sums, counts, maxima,
 *   so a coarser bucket is computed from finer ones without loss);
 * - tunnels' raw tier is `tunnel_samples`; `stat_tunnel_1m`/`_1h` roll it up.
 * `stat_state_changes` keeps BGP session and VRRP state changes as events;
 * `stat_rollup_progress` how far each roll-up has got.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

const COUNTERS = sql.raw(`
  rx_bytes bigint not null,
  tx_bytes bigint not null,
  rx_packets bigint,
  tx_packets bigint,
  rx_errors bigint,
  tx_errors bigint,
  rx_drops bigint,
  tx_drops bigint`);

const HEALTH_ROLLUP = sql.raw(`
  samples integer not null,
  cpu_sum double precision not null,
  cpu_max real not null,
  memory_sum double precision not null,
  memory_max real not null,
  disk_sum double precision not null,
  disk_max real not null,
  uptime_max double precision not null,
  temperature_sum double precision,
  temperature_samples integer not null,
  temperature_max real`);

const TUNNEL_ROLLUP = sql.raw(`
  samples integer not null,
  up_samples integer not null,
  loss_sum double precision not null,
  loss_max real not null,
  rtt_sum double precision not null,
  rtt_max real not null,
  jitter_sum double precision not null,
  jitter_max real not null`);

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table stat_if_raw (
    at timestamptz(3) not null,
    organization_id uuid not null,
    device_id uuid not null,
    interface text not null,
    seconds real not null,
    ${COUNTERS}
  ) partition by range (at)`.execute(db);
  await sql`create index stat_if_raw_device_idx on stat_if_raw (device_id, at)`.execute(db);
  await sql`create index stat_if_raw_at_idx on stat_if_raw using brin (at)`.execute(db);

  for (const tier of ["1m", "1h"]) {
    const t = sql.table(`stat_if_${tier}`);
    await sql`create table ${t} (
      bucket timestamptz not null,
      organization_id uuid not null,
      device_id uuid not null,
      interface text not null,
      samples integer not null,
      seconds double precision not null,
      ${COUNTERS},
      primary key (device_id, interface, bucket)
    ) partition by range (bucket)`.execute(db);
    // Organization aggregates (top talkers) read only the index.
    await sql`create index ${sql.raw(`stat_if_${tier}_org_idx`)} on ${t} (organization_id, bucket)
      include (device_id, interface, rx_bytes, tx_bytes)`.execute(db);
  }

  await sql`create table stat_health_raw (
    at timestamptz(3) not null,
    organization_id uuid not null,
    device_id uuid not null,
    samples integer not null,
    cpu real not null,
    cpu_max real not null,
    memory real not null,
    disk real not null,
    uptime double precision not null,
    temperature real
  ) partition by range (at)`.execute(db);
  await sql`create index stat_health_raw_device_idx on stat_health_raw (device_id, at)`.execute(db);
  await sql`create index stat_health_raw_at_idx on stat_health_raw using brin (at)`.execute(db);

  for (const tier of ["1m", "1h"]) {
    await sql`create table ${sql.table(`stat_health_${tier}`)} (
      bucket timestamptz not null,
      organization_id uuid not null,
      device_id uuid not null,
      ${HEALTH_ROLLUP},
      primary key (device_id, bucket)
    ) partition by range (bucket)`.execute(db);
    const t = sql.table(`stat_tunnel_${tier}`);
    await sql`create table ${t} (
      bucket timestamptz not null,
      organization_id uuid not null,
      tunnel_id uuid not null,
      side text not null,
      ${TUNNEL_ROLLUP},
      primary key (tunnel_id, side, bucket)
    ) partition by range (bucket)`.execute(db);
    await sql`create index ${sql.raw(`stat_tunnel_${tier}_org_idx`)} on ${t} (organization_id, bucket)
      include (tunnel_id, samples, up_samples, loss_sum, rtt_sum, jitter_sum)`.execute(db);
  }

  await sql`create table stat_state_changes (
    at timestamptz(3) not null,
    organization_id uuid not null,
    device_id uuid not null,
    kind text not null check (kind in ('bgp', 'vrrp')),
    key text not null,
    from_state text,
    to_state text not null
  ) partition by range (at)`.execute(db);
  await sql`create index stat_state_changes_device_idx on stat_state_changes (device_id, kind, key, at)`.execute(db);

  await sql`create table stat_rollup_progress (
    name text primary key,
    done_until timestamptz not null
  )`.execute(db);
}
