/**
 * Tunnel samples in daily partitions, dropped whole once expired (issue 14),
 * like the statistics tables (services/statistics/partitions.ts). Deleting
 * expired rows found through the BRIN index on `at` stops working once a
 * retention's worth has gone: VACUUM frees the rows' pages, new samples fill
 * them, and every page range's summary then spans old and new times, so the
 * retention's look for expired rows read most of the table every 5 s
 * (26,752 of 37,334 pages, measured; docs/scale.md).
 *
 * A new database gets the partitioned table empty. An existing one keeps its
 * samples: the old table becomes one partition holding every time before the
 * end of the day of its newest sample (`tunnel_samples_before_p<yyyymmddhh>`,
 * its end in its name), dropped whole once that end is older than the
 * retention. Attaching it reads it once, under the migration's lock, to check
 * the bound: 0.5 s for 2.1 million samples, measured; at 10,000 devices and a
 * week of samples about 240 GB, once (docs/install.md says how long). Partitions from its end (or today) to two days ahead are made here, so
 * the writers have somewhere to write before the partition duty's first run.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

const DAY_MS = 86_400_000;
const AHEAD_MS = 2 * DAY_MS;

const COLUMNS = sql.raw(`
  tunnel_id uuid not null,
  device_id uuid not null,
  side char(1) not null,
  at timestamptz(3) not null,
  up boolean not null,
  loss real not null,
  rtt real not null,
  jitter real not null,
  samples integer not null,
  window_ms integer,
  sent bigint,
  received bigint`);

/** `2026-12-07T00:00:00.000Z` → `2026120700`, as services/statistics/partitions.ts names partitions. */
const stamp = (t: number) => new Date(t).toISOString().replace(/[-T:]/g, "").slice(0, 10);
const floorDay = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = Date.now();
  const today = floorDay(now);
  let from = today;
  const { rows } = await sql<{ any: boolean }>`select exists (select 1 from tunnel_samples) as any`.execute(db);
  if (rows[0]?.any) {
    // The old table's bound: the end of today, or of the day of its newest sample if a clock put one later
    // (the BRIN index answers the probe without reading the table).
    from = today + DAY_MS;
    const later = await sql<{ max: Date | null }>`
      select max(at) as max from tunnel_samples where at >= ${new Date(from)}`.execute(db);
    const max = later.rows[0]?.max;
    if (max) from = floorDay(new Date(max).getTime()) + DAY_MS;
    const old = `tunnel_samples_before_p${stamp(from)}`;
    await sql`alter table tunnel_samples rename to ${sql.table(old)}`.execute(db);
    await sql`alter index tunnel_samples_tunnel_at_idx rename to ${sql.raw(`${old}_tunnel_at_idx`)}`.execute(db);
    await sql`alter index tunnel_samples_at_brin rename to ${sql.raw(`${old}_at_brin`)}`.execute(db);
    await createPartitioned(db);
    // Its indexes match the parent's, so they are attached, not built again.
    await sql`alter table tunnel_samples attach partition ${sql.table(old)}
      for values from (minvalue) to (${sql.lit(new Date(from).toISOString())})`.execute(db);
  } else {
    await sql`drop table tunnel_samples`.execute(db);
    await createPartitioned(db);
  }
  for (let start = from; start < now + AHEAD_MS; start += DAY_MS) {
    await sql`create table ${sql.table(`tunnel_samples_p${stamp(start)}`)} partition of tunnel_samples
      for values from (${sql.lit(new Date(start).toISOString())}) to (${sql.lit(new Date(start + DAY_MS).toISOString())})`.execute(
      db,
    );
  }
}

async function createPartitioned(db: Kysely<unknown>): Promise<void> {
  await sql`create table tunnel_samples (${COLUMNS}) partition by range (at)`.execute(db);
  await sql`create index tunnel_samples_tunnel_at_idx on tunnel_samples (tunnel_id, at)`.execute(db);
  // Each day's partition is read by time (the minute roll-up): BRIN, summarized as its ranges fill (20261207-201).
  await sql`create index tunnel_samples_at_brin on tunnel_samples using brin (at) with (autosummarize = on)`.execute(db);
}

/** One plain table again, every sample kept. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create table tunnel_samples_flat (${COLUMNS})`.execute(db);
  await sql`insert into tunnel_samples_flat select * from tunnel_samples order by at`.execute(db);
  await sql`drop table tunnel_samples`.execute(db);
  await sql`alter table tunnel_samples_flat rename to tunnel_samples`.execute(db);
  await sql`create index tunnel_samples_tunnel_at_idx on tunnel_samples (tunnel_id, at)`.execute(db);
  await sql`create index tunnel_samples_at_brin on tunnel_samples using brin (at) with (autosummarize = on)`.execute(db);
}
