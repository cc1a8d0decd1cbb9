/**
 * Partitions of the statistics tables and the tunnel samples: made ahead of
 * time, dropped whole when expired (no DELETE, no vacuum debt). Partitions
 * are cut at multiples of their width since the Unix epoch, in UTC, and named
 * for their start (`stat_if_raw_p2026112600`), so their range is known from
 * the name. One partition may hold everything before a time, named for that
 * end (`tunnel_samples_before_p2026120800`): the samples an install had when
 * its table became partitioned (migration 20261207-301).
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { AHEAD_MS, PARTITIONED_TABLES, type PartitionedTable, type StatisticsSettings } from "./settings.ts";

/** PostgreSQL's error for a row that no partition of its table holds (a check violation). */
export const NO_PARTITION = "23514";

const floorTo = (t: number, width: number) => Math.floor(t / width) * width;

function partitionName(table: string, start: number): string {
  const iso = new Date(start).toISOString(); // 2026-11-26T00:00:00.000Z
  return `${table}_p${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}`;
}

export interface Partition {
  name: string;
  /** Its range, [start, end); a partition of everything before `end` starts at -Infinity. */
  start: number;
  end: number;
}

function rangeOf(t: PartitionedTable, name: string): Partition | null {
  const m = new RegExp(`^${t.table}_(before_)?p(\\d{4})(\\d{2})(\\d{2})(\\d{2})$`).exec(name);
  if (!m) return null;
  const time = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]), Number(m[5]));
  return m[1] ? { name, start: Number.NEGATIVE_INFINITY, end: time } : { name, start: time, end: time + t.partitionMs };
}

const tableNamed = (table: string): PartitionedTable => {
  const t = PARTITIONED_TABLES.find((p) => p.table === table);
  if (!t) throw new Error(`${table} is not a partitioned table`);
  return t;
};

/** The partitions a table has now, earliest first. */
export async function listPartitions(db: Db, table: string): Promise<Partition[]> {
  const t = tableNamed(table);
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname = ${table} and p.relnamespace = current_schema()::regnamespace`.execute(db);
  return rows
    .map((r) => rangeOf(t, r.name))
    .filter((p): p is Partition => p !== null)
    .sort((a, b) => a.start - b.start);
}

async function createPartition(db: Db, t: PartitionedTable, start: number): Promise<void> {
  const from = new Date(start).toISOString();
  const to = new Date(start + t.partitionMs).toISOString();
  await sql`create table if not exists ${sql.table(partitionName(t.table, start))}
    partition of ${sql.table(t.table)} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(db);
}

async function dropPartition(db: Db, name: string): Promise<void> {
  await sql`drop table if exists ${sql.table(name)}`.execute(db);
}

type Listing = Map<PartitionedTable, Partition[]>;

/** Each partitioned table's partitions (of `tables`, default all), one catalog query per table. */
async function listAll(db: Db, tables?: readonly string[]): Promise<Listing> {
  const listing: Listing = new Map();
  for (const t of PARTITIONED_TABLES) if (!tables || tables.includes(t.table)) listing.set(t, await listPartitions(db, t.table));
  return listing;
}

/** The partitions missing from the one holding `since` to AHEAD_MS past now, earliest first across tables. */
function missingPartitions(listing: Listing, now: number, since: number): { t: PartitionedTable; start: number }[] {
  const missing: { t: PartitionedTable; start: number }[] = [];
  for (const [t, partitions] of listing) {
    const covered = (start: number) => partitions.some((p) => p.start <= start && start < p.end);
    for (let start = floorTo(since, t.partitionMs); start < now + AHEAD_MS; start += t.partitionMs)
      if (!covered(start)) missing.push({ t, start });
  }
  return missing.sort((a, b) => a.start - b.start);
}

/**
 * Makes every partition from the one holding `since` (default: now) to
 * AHEAD_MS past now. Idempotent; the writer calls it when a row found no
 * partition (the duty had not run yet), tests and the bench to prepare.
 */
export async function ensurePartitions(db: Db, now = Date.now(), since = now, tables?: readonly string[]): Promise<number> {
  const missing = missingPartitions(await listAll(db, tables), now, since);
  for (const m of missing) await createPartition(db, m.t, m.start);
  return missing.length;
}

/** The partitions whose whole range is older than their table's retention. */
function expiredPartitions(listing: Listing, settings: StatisticsSettings, now: number): string[] {
  const expired: string[] = [];
  for (const [t, partitions] of listing) {
    const cutoff = now - t.retentionMs(settings);
    for (const p of partitions) if (p.end <= cutoff) expired.push(p.name);
  }
  return expired;
}

/** Drops each partition whose whole range is older than its table's retention; returns the dropped names. */
export async function dropExpiredPartitions(db: Db, settings: StatisticsSettings, now = Date.now()): Promise<string[]> {
  const expired = expiredPartitions(await listAll(db), settings, now);
  for (const name of expired) await dropPartition(db, name);
  return expired;
}

/**
 * The partition duty's work, at most `limit` creates and drops per call (the
 * earliest missing partitions first, then the expired ones): a new database
 * lacks about 130 partitions, and making them all in one transaction held
 * PGlite's only connection for about a second, every request waiting behind
 * it. `more` says that work was left for the next call.
 */
export async function maintainPartitions(
  db: Db,
  settings: StatisticsSettings,
  limit: number,
  now = Date.now(),
): Promise<{ created: number; dropped: string[]; more: boolean }> {
  const listing = await listAll(db);
  const missing = missingPartitions(listing, now, now);
  const create = missing.slice(0, limit);
  for (const m of create) await createPartition(db, m.t, m.start);
  const expired = expiredPartitions(listing, settings, now);
  const dropped = expired.slice(0, limit - create.length);
  for (const name of dropped) await dropPartition(db, name);
  return { created: create.length, dropped, more: missing.length + expired.length > create.length + dropped.length };
}
