/**
 * Opens the database: a PostgreSQL server through a pg Pool when a URL is
 * given, otherwise embedded PGlite (in memory or in a data directory). Both go
 * through Kysely's PostgresDialect, so the queries and migrations are the same.
 */
import { EventEmitter } from "node:events";
import { mkdir } from "node:fs/promises";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { restrictUmask, tightenDataDir } from "../data-dir/permissions.ts";
import { createDataDirInChild } from "./pglite-initdb.ts";
import { createPGlitePool } from "./pglite-pool.ts";
import { type EmbeddedDatabase, startPGliteThread } from "./pglite-thread/client.ts";
import { PreparingClient, preparingClient } from "./prepared-client.ts";
import type { Database } from "./schema.ts";

export type DatabaseKind = "pglite" | "postgres";

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /** The PostgreSQL URL (the device gateway opens its own LISTEN connection with it). */
  url?: string;
  /** The embedded database's LISTEN and dump (the device gateway LISTENs on it directly; backups dump it). */
  pglite?: EmbeddedDatabase;
  /**
   * On PostgreSQL: the notifications of `OWN_CHANNELS` that the pool's own connections hear, by channel. Each
   * pooled connection LISTENs on them, and PostgreSQL hands a session the notifications its own transaction sent
   * before that COMMIT returns: a change's sender hears it before its request answers (auth/auth-cache.ts).
   * (On PGlite the one connection delivers to `pglite.listen` the same way, within the query.)
   */
  ownNotifications?: EventEmitter;
  /** Closes every connection (and the embedded database). */
  close(): Promise<void>;
}

export type DatabaseTarget =
  /** preparedStatements: per connection (TERN_DB_PREPARED_STATEMENTS); unset = none, as plain pg. */
  | { kind: "postgres"; url: string; poolSize?: number; preparedStatements?: number }
  /**
   * dataDir undefined = in memory; loadDataDir = start from a dump (tests share a migrated template);
   * preparedStatements: kept prepared on its one connection (db/pglite-prepared.ts); unset = none.
   */
  | { kind: "pglite"; dataDir?: string; loadDataDir?: Blob; preparedStatements?: number };

// int8 (count(*), sums) as JS numbers like PGlite does; our counts stay far below 2^53.
const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Channels every pooled PostgreSQL connection LISTENs on (DatabaseHandle.ownNotifications). */
export const OWN_CHANNELS = ["tern_auth"] as const;

/**
 * A pg Pool of at most `poolSize` connections to `url`, set up as the server uses it: no JIT, no parallel
 * workers, int8 as numbers, and with `preparedStatements`, each connection keeps that many statements
 * prepared, planned once with generic plans (db/prepared-client.ts).
 */
export function postgresPool(url: string, poolSize: number, preparedStatements = 0): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
    // No JIT: the API's list queries (tunnel facts with their CTEs) are estimated far above jit_above_cost
    // and then spend 0.1–1.3 s compiling LLVM code for 30 ms of work. Short OLTP statements never gain from it.
    // Generic plans for the prepared statements: PostgreSQL's default (custom plans while it judges them
    // cheaper) planned the approval's surroundings statement at every execution, 0.3 ms of planning for 0.2 ms
    // of execution. Their hazards and how they are met: db/prepared-client.ts; the A/B runs: docs/bench.md.
    // No parallel workers: a generic plan does not know a list's LIMIT and plans for 10 % of the rows, which for
    // the jobs page at 10,000 jobs was a parallel scan (Gather Merge), a worker process started for every
    // request: 161 requests a second against 624 without (docs/bench.md). Tern's statements are short; the
    // organization-wide statistics reads, which gain from workers, ask for them (services/statistics/org-aggregates.ts).
    options: `-c jit=off -c max_parallel_workers_per_gather=0${preparedStatements > 0 ? " -c plan_cache_mode=force_generic_plan" : ""}`,
    Client: preparingClient(preparedStatements),
  });
  // A statement evicted from a connection's cache is closed once the connection is back: outside a transaction.
  pool.on("release", (_error, client) => {
    if (client instanceof PreparingClient) client.closeEvicted();
  });
  // An idle connection that the server ends (restart, pg_terminate_backend, DROP DATABASE … FORCE) makes the
  // pool emit 'error'; unheard, that event would crash the process. The pool drops that connection by itself
  // and the next query opens a new one, so there is nothing else to do.
  pool.on("error", () => {});
  return pool;
}

/**
 * A Kysely instance over postgresPool(); with `notifications`, each connection LISTENs on OWN_CHANNELS and
 * emits what it hears there, by channel.
 */
export function postgresDb(
  url: string,
  poolSize: number,
  notifications?: EventEmitter,
  preparedStatements = 0,
): Kysely<Database> {
  const pool = postgresPool(url, poolSize, preparedStatements);
  if (notifications)
    pool.on("connect", (client) => {
      client.on("notification", (n) => notifications.emit(n.channel, n.payload ?? ""));
      // Queued before the query the connection was opened for. Should it fail, the dedicated LISTEN connection
      // (gateway/bus.ts) still delivers, a moment later.
      for (const channel of OWN_CHANNELS) client.query(`LISTEN ${channel}`).catch(() => {});
    });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Memory settings of the embedded database. PGlite keeps PostgreSQL's defaults, sized for a server of its
 * own (shared_buffers 128MB, maintenance_work_mem 64MB), and its WebAssembly memory only grows: every
 * buffer once touched stays in the process's RSS. One process serving the API and the devices needs far
 * less: 1,000 devices' tables fit in a few MB of pages, and the OS page cache holds the data directory.
 * Measured at start (docs/bench.md): 440 → 338 MB RSS on an existing data directory.
 */
const PGLITE_SETTINGS = ["shared_buffers=32MB", "maintenance_work_mem=16MB", "temp_buffers=4MB"];

export async function openDatabase(target: DatabaseTarget): Promise<DatabaseHandle> {
  if (target.kind === "postgres") {
    const ownNotifications = new EventEmitter();
    const db = postgresDb(target.url, target.poolSize ?? 10, ownNotifications, target.preparedStatements);
    return { db, kind: "postgres", url: target.url, ownNotifications, close: () => db.destroy() };
  }
  // Owner-only files (data-dir/permissions.ts): the umask covers what PGlite creates while it runs; the files
  // it unpacks into a new database come with explicit 0666 modes and are tightened once it is open.
  if (target.dataDir) {
    restrictUmask();
    await mkdir(target.dataDir, { recursive: true, mode: 0o700 });
  }
  // After PGlite's defaults (pglite-initdb.ts and the thread add them: the server's own thread never loads PGlite).
  const startParams = PGLITE_SETTINGS.flatMap((s) => ["-c", s]);
  // A new data directory is made by a child process, whose WebAssembly memory goes with it (pglite-initdb.ts).
  if (target.dataDir && !target.loadDataDir) await createDataDirInChild(target.dataDir, startParams);
  // Its statements run in a thread of their own, off the sockets' (db/pglite-thread/thread.ts).
  const pglite = await startPGliteThread({
    ...(target.dataDir ? { dataDir: target.dataDir } : {}),
    ...(target.loadDataDir ? { loadDataDir: new Uint8Array(await target.loadDataDir.arrayBuffer()) } : {}),
    startParams,
    preparedStatements: target.preparedStatements ?? 0,
  });
  if (target.dataDir) await tightenDataDir(target.dataDir);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: createPGlitePool(pglite.query, () => pglite.close()) }),
  });
  return { db, kind: "pglite", pglite, close: () => db.destroy() };
}
