/**
 * A one-connection "pool" over PGlite for Kysely's own PostgresDialect.
 *
 * PGlite is a single session that runs statements one at a time, in the order
 * they are sent. So a statement is sent at once, whoever asks, except while a
 * transaction is open: then only its own statements go, and the others wait
 * for its COMMIT or ROLLBACK (or the release of its connection), so that none
 * lands inside it. Until 2026-12-06 a connection was handed to one caller at
 * a time, as a pg Pool of size 1 does, and the next caller's statement was
 * sent only once the previous caller had had its answer and released: with
 * the database in a thread of its own (db/pglite-thread), the database then
 * sat idle for every hop through the server's busy event loop.
 * (kysely-pglite's driver sends every caller's statements at once, a
 * transaction's included, and its import pulls a CLI and a code generator, so
 * we do not use it.) Consequence: code inside a transaction must use the
 * transaction object, never the outer `db`, or it waits for itself.
 */
import type { PGlite } from "@electric-sql/pglite";
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";
import type { PGliteQuery } from "./pglite-prepared.ts";

/** What Kysely's PostgresDriver sends to open and to end a transaction (savepoints are inside one). */
const TRANSACTION_START = /^\s*(begin|start\s+transaction)\b/i;
const TRANSACTION_END = /^\s*(commit|rollback)\s*;?\s*$/i;

/**
 * `run` executes one statement: PGlite's own query (pglitePool), one that keeps statements prepared
 * (db/pglite-prepared.ts), or the embedded database's thread (db/pglite-thread/client.ts, as the server opens
 * its database). It must send the statement before it returns, in call order. `end` closes what runs them.
 */
export function createPGlitePool(run: PGliteQuery, end: () => Promise<void>): PostgresPool {
  /** The client whose transaction is open, and what resolves when it ends. */
  let owner: object | null = null;
  let ownerDone: Promise<void> = Promise.resolve();
  let finishOwner = () => {};
  /** The last statement sent: the one-session database answers in order, so it answers last. */
  let last: Promise<unknown> = Promise.resolve();

  const endTransaction = (client: object) => {
    if (owner !== client) return;
    owner = null;
    finishOwner();
  };

  async function query<R>(client: object, sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    // Re-checked after each wait: of several waiters, the first to go may open a transaction of its own.
    while (owner !== null && owner !== client) await ownerDone;
    if (owner === null && TRANSACTION_START.test(sql)) {
      owner = client;
      ownerDone = new Promise<void>((resolve) => {
        finishOwner = resolve;
      });
    }
    const answer = run<R>(sql, parameters);
    last = answer.catch(() => {});
    // Sent: whatever comes next runs after it. A COMMIT or ROLLBACK ends the transaction even when it fails.
    if (TRANSACTION_END.test(sql)) endTransaction(client);
    const result = await answer;
    const command = (result.command?.toUpperCase() ?? "SELECT") as PostgresQueryResult<R>["command"];
    return { command, rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length, rows: result.rows };
  }

  return {
    async connect() {
      const client = {};
      // Cursors (streaming) are not supported, so only the (sql, parameters) form of query exists.
      return {
        query: ((sql: string, parameters: readonly unknown[]) => query(client, sql, parameters)) as PostgresPoolClient["query"],
        // A connection given back inside its transaction (a BEGIN that failed) holds no one up.
        release: () => endTransaction(client),
      };
    },
    async end() {
      await last;
      await end();
    },
  };
}

/** A pool over a PGlite of this thread, with its own query (scripts and tests; the server's runs in a thread). */
export function pglitePool(pglite: PGlite): PostgresPool {
  return createPGlitePool(
    (sql, parameters) => pglite.query(sql, parameters as unknown[]),
    () => pglite.close(),
  );
}
