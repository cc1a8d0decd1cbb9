/**
 * The database of the profiling aids (`*-profile.ts`, not bench cases): an in-memory PGlite, or PostgreSQL when
 * PG_URL names an empty scratch database, through Kysely as the server uses it, with each statement's time summed
 * by its text while `timing` is on.
 */
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, type PostgresPool } from "kysely";
import pg from "pg";
import type { DatabaseHandle } from "../../../apps/server/src/db/database.ts";
import { pglitePool } from "../../../apps/server/src/db/pglite-pool.ts";
import type { Database } from "../../../apps/server/src/db/schema.ts";

export interface StatementTime {
  text: string;
  /** Executions. */
  n: number;
  ms: number;
}

export interface ProfileDb {
  db: Kysely<Database>;
  /** For seedFleet (test-harness/src/bench/server/seed.ts). */
  handle: DatabaseHandle;
  /** Statements are timed only while on (not the seeding). */
  timing: boolean;
  /** The statements timed so far, longest first; `clear` starts over. */
  statements(options?: { clear?: boolean }): StatementTime[];
  /** Prints the longest `limit` statements: total ms, executions, text. */
  printStatements(limit?: number): void;
}

export async function profileDb(
  options: { pool?: (url: string) => PostgresPool; pglite?: PGliteOptions } = {},
): Promise<ProfileDb> {
  const url = process.env.PG_URL;
  const pglite = url ? undefined : await PGlite.create(options.pglite);
  const times = new Map<string, StatementTime>();
  const pool = url ? (options.pool?.(url) ?? new pg.Pool({ connectionString: url, max: 10 })) : pglitePool(pglite!);
  const profile: ProfileDb = {
    timing: false,
    db: new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log(e) {
        if (!profile.timing) return;
        const text = e.query.sql.replace(/\s+/g, " ").slice(0, 120);
        const t = times.get(text) ?? { text, n: 0, ms: 0 };
        t.n++;
        t.ms += e.queryDurationMillis;
        times.set(text, t);
      },
    }),
    get handle() {
      return { db: profile.db, kind: url ? "postgres" : "pglite", pglite, close: async () => {} } as DatabaseHandle;
    },
    statements({ clear = false } = {}) {
      const sorted = [...times.values()].sort((a, b) => b.ms - a.ms);
      if (clear) times.clear();
      return sorted;
    },
    printStatements(limit = 15) {
      for (const t of profile.statements().slice(0, limit))
        console.log(t.ms.toFixed(0).padStart(7), String(t.n).padStart(5), t.text);
    },
  };
  return profile;
}
