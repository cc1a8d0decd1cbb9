/**
 * Which migrations a database has and which it lacks, read without changing
 * anything (`tern-server migrate status`, doctor, the backup manifest).
 */
import { type Kysely, sql } from "kysely";
import { MIGRATIONS } from "./migrate.ts";

export interface MigrationStatus {
  /** Known migrations the database has, in the order they ran, with when. */
  applied: { name: string; at: Date }[];
  /** Known migrations the database lacks (migrate up runs them). */
  pending: string[];
  /** Migrations the database has that this server does not know: a newer server wrote them. */
  unknown: string[];
}

export async function readMigrationStatus(db: Kysely<unknown>): Promise<MigrationStatus> {
  const exists = await sql<{ t: string | null }>`select to_regclass('kysely_migration')::text as t`.execute(db);
  const rows = exists.rows[0]?.t
    ? (
        await sql<{
          name: string;
          timestamp: string;
        }>`select name, timestamp from kysely_migration order by timestamp, name`.execute(db)
      ).rows
    : [];
  const known = new Set(Object.keys(MIGRATIONS));
  const done = new Set(rows.map((r) => r.name));
  return {
    applied: rows.filter((r) => known.has(r.name)).map((r) => ({ name: r.name, at: new Date(r.timestamp) })),
    pending: Object.keys(MIGRATIONS)
      .filter((n) => !done.has(n))
      .sort(),
    unknown: rows.filter((r) => !known.has(r.name)).map((r) => r.name),
  };
}
