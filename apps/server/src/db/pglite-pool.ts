/**
 * A one-connection "pool" over PGlite for Kysely's own PostgresDialect.
 *
 * PGlite is a single in-process session: two Kysely transactions that ran
 * interleaved on it would share one BEGIN…COMMIT. So a connection is handed out
 * to one caller at a time and the next waits until it is released, which is
 * what a pg Pool of size 1 does. (kysely-pglite's driver hands the same session
 * to every caller at once, and its import pulls a CLI and a code generator, so
 * we do not use it.) Consequence: code inside a transaction must use the
 * transaction object, never the outer `db`, or it waits for itself.
 */
import type { PGlite } from "@electric-sql/pglite";
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import type { PGliteQuery } from "./pglite-prepared.ts";

export interface PGlitePool extends PostgresPool {
  /** Callers waiting for the connection (for diagnostics and tests). */
  readonly waiting: number;
}

/**
 * `run` executes one statement: PGlite's own query (pglitePool), one that keeps statements prepared
 * (db/pglite-prepared.ts), or the embedded database's thread (db/pglite-thread/client.ts, as the server opens
 * its database); `end` closes what runs them.
 */
export function createPGlitePool(run: PGliteQuery, end: () => Promise<void>): PGlitePool {
  let tail: Promise<void> = Promise.resolve();
  let waiting = 0;

  async function query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    const result = await run<R>(sql, parameters);
    const command = (result.command?.toUpperCase() ?? "SELECT") as PostgresQueryResult<R>["command"];
    return { command, rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length, rows: result.rows };
  }
  // Cursors (streaming) are not supported, so only the (sql, parameters) form of query exists.
  const client = (release: () => void): PostgresPoolClient => ({ query: query as PostgresPoolClient["query"], release });

  return {
    get waiting() {
      return waiting;
    },
    async connect() {
      waiting += 1;
      const previous = tail;
      let release!: () => void;
      tail = new Promise<void>((resolve) => {
        release = resolve;
      });
      await previous;
      waiting -= 1;
      let released = false;
      return client(() => {
        if (released) return;
        released = true;
        release();
      });
    },
    async end() {
      await tail;
      await end();
    },
  };
}

/** A pool over a PGlite of this thread, with its own query (scripts and tests; the server's runs in a thread). */
export function pglitePool(pglite: PGlite): PGlitePool {
  return createPGlitePool(
    (sql, parameters) => pglite.query(sql, parameters as unknown[]),
    () => pglite.close(),
  );
}
