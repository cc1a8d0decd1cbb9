/**
 * The database a command works on: the one the settings name. The embedded
 * database belongs to one process, so a command takes the data directory's
 * lock for as long as it works and refuses while the server runs.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { ServerConfig } from "../config.ts";
import { type DataDirLock, DataDirLockedError, lockDataDir } from "../db/data-dir-lock.ts";
import { type DatabaseHandle, openDatabase } from "../db/database.ts";
import { readMigrationStatus } from "../db/migration-status.ts";
import { isDataDir } from "../db/pglite-initdb.ts";
import { CliError } from "./cli-error.ts";
import { databaseError } from "./startup-errors.ts";

export const pgdataDir = (config: Pick<ServerConfig, "TERN_DATA_DIR">) => path.join(config.TERN_DATA_DIR, "pgdata");

/** True when the data directory holds an embedded database (db/pglite-initdb.ts: PostgreSQL's PG_VERSION). */
export async function embeddedDatabaseExists(config: Pick<ServerConfig, "TERN_DATA_DIR">): Promise<boolean> {
  return isDataDir(pgdataDir(config));
}

/** The data directory's lock, or a CliError saying the server runs on it. */
export async function lockForCommand(config: Pick<ServerConfig, "TERN_DATA_DIR">, what: string): Promise<DataDirLock> {
  try {
    return await lockDataDir(config.TERN_DATA_DIR);
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new CliError(
        `a Tern server (pid ${err.pid}) is running on the embedded database in ${err.dir}`,
        `stop it first (systemctl stop tern-server, or kill ${err.pid}) to ${what}: the embedded database belongs to one process`,
        1,
        { cause: err },
      );
    throw err;
  }
}

export interface OpenOptions {
  /** What the command does, for the "stop the server first" message. */
  what: string;
  /** Refuse when migrations are pending (commands that need the current schema). */
  requireCurrentSchema?: boolean;
  /** Refuse when the data directory has no embedded database yet (instead of creating an empty one). */
  requireExisting?: boolean;
}

/** Runs `fn` on the configured database, then closes it (and releases the lock). */
export async function withDatabase<T>(
  config: ServerConfig,
  options: OpenOptions,
  fn: (db: DatabaseHandle) => Promise<T>,
): Promise<T> {
  let lock: DataDirLock | null = null;
  if (!config.DATABASE_URL) {
    if (options.requireExisting && !(await embeddedDatabaseExists(config)))
      throw new CliError(
        `there is no embedded database in ${pgdataDir(config)}`,
        "check TERN_DATA_DIR (or --data-dir); the server creates the database on its first start, `tern-server migrate up` creates it too",
      );
    await mkdir(config.TERN_DATA_DIR, { recursive: true, mode: 0o700 });
    lock = await lockForCommand(config, options.what);
  }
  let handle: DatabaseHandle | null = null;
  try {
    handle = config.DATABASE_URL
      ? await openDatabase({ kind: "postgres", url: config.DATABASE_URL, poolSize: 2 })
      : await openDatabase({ kind: "pglite", dataDir: pgdataDir(config) });
    if (options.requireCurrentSchema) {
      const status = await readMigrationStatus(handle.db as never);
      if (status.pending.length)
        throw new CliError(
          `the database lacks ${status.pending.length} migration(s) of this server version (${status.pending.join(", ")})`,
          "run `tern-server migrate up` first (the server also runs them when it starts)",
        );
    }
    return await fn(handle);
  } catch (err) {
    throw databaseError(err, config) ?? err;
  } finally {
    await handle?.close().catch(() => {});
    await lock?.release();
  }
}
