/**
 * Opens the database: a PostgreSQL server through a pg Pool when a URL is
 * given, otherwise embedded PGlite (in memory or in a data directory). Both go
 * through Kysely's PostgresDialect, so the queries and migrations are the same.
 */
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { createPGlitePool } from "./pglite-pool.ts";
import type { Database } from "./schema.ts";

export type DatabaseKind = "pglite" | "postgres";

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /** Closes every connection (and the embedded database). */
  close(): Promise<void>;
}

export type DatabaseTarget =
  | { kind: "postgres"; url: string; poolSize?: number }
  /** dataDir undefined = in memory; loadDataDir = start from a dump (tests share a migrated template). */
  | { kind: "pglite"; dataDir?: string; loadDataDir?: Blob };

// int8 (count(*), sums) as JS numbers like PGlite does; our counts stay far below 2^53.
const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export async function openDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === "postgres") {
    const pool = new pg.Pool({ connectionString: target.url, max: target.poolSize ?? 10, types: pgTypes });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: "postgres", close: () => db.destroy() };
  }
  if (target.dataDir) await mkdir(target.dataDir, { recursive: true });
  const pglite = await PGlite.create({
    ...(target.dataDir ? { dataDir: target.dataDir } : {}),
    ...(target.loadDataDir ? { loadDataDir: target.loadDataDir } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPGlitePool(pglite) }) });
  return { db, kind: "pglite", close: () => db.destroy() };
}
