/**
 * The database: reachable, its schema against this version, the server key
 * opening its encrypted values, and its clock against this machine's.
 */
import { execFile } from "node:child_process";
import { sql } from "kysely";
import type { ServerConfig } from "../../config.ts";
import { type DataDirLock, DataDirLockedError, lockDataDir } from "../../db/data-dir-lock.ts";
import { type DatabaseHandle, openDatabase } from "../../db/database.ts";
import { readMigrationStatus } from "../../db/migration-status.ts";
import { checkKeyOpensDatabase } from "../../services/backup/key-check.ts";
import { embeddedDatabaseExists, pgdataDir } from "../database.ts";
import { databaseError, describeDatabaseUrl } from "../startup-errors.ts";
import { type CheckResult, fail, ok, warn } from "./check.ts";

const TIMEOUT_MS = 10_000;

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out`), { code: "ETIMEDOUT" })), TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** `timedatectl`'s view of NTP, or null where there is no systemd to ask. */
function ntpSynchronized(): Promise<boolean | null> {
  return new Promise((resolve) => {
    execFile(
      "timedatectl",
      ["show", "-p", "NTPSynchronized", "--value"],
      { env: { ...process.env, LC_ALL: "C" }, timeout: 5_000 },
      (err, out) => resolve(err ? null : out.trim() === "yes"),
    );
  });
}

async function checkClock(handle: DatabaseHandle): Promise<CheckResult> {
  const name = "clock";
  const before = Date.now();
  const r = await sql<{ t: number }>`select extract(epoch from clock_timestamp())::float8 * 1000 as t`.execute(handle.db);
  const after = Date.now();
  const skewMs = Math.abs(Number(r.rows[0]?.t) - (before + after) / 2);
  const synced = await ntpSynchronized();
  const sync = synced === null ? "" : synced ? ", NTP synchronized" : ", NTP NOT synchronized";
  const fix = "synchronize the clocks of this machine and the database server (systemd-timesyncd, chrony)";
  if (skewMs > 30_000) return fail(name, `this machine and the database differ by ${(skewMs / 1000).toFixed(1)} s${sync}`, fix);
  if (skewMs > 2_000) return warn(name, `this machine and the database differ by ${(skewMs / 1000).toFixed(1)} s${sync}`, fix);
  if (synced === false)
    return warn(
      name,
      `agrees with the database (${Math.round(skewMs)} ms)${sync}`,
      "enable NTP (timedatectl set-ntp true): tokens and jobs have time limits",
    );
  return ok(name, `agrees with the database (${Math.round(skewMs)} ms apart${sync})`);
}

async function checkOpen(handle: DatabaseHandle, key: Buffer | null): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const status = await readMigrationStatus(handle.db as never);
  if (status.unknown.length)
    results.push(
      fail(
        "migrations",
        `the database has migrations this version does not know (${status.unknown.join(", ")})`,
        "run the newer tern-server that wrote them",
      ),
    );
  else if (status.pending.length)
    results.push(
      warn(
        "migrations",
        `${status.pending.length} pending (${status.pending.join(", ")})`,
        "run `tern-server migrate up`, or start the server (it runs them)",
      ),
    );
  else results.push(ok("migrations", `${status.applied.length} applied, none pending`));
  if (!status.pending.includes("20251124-501-notify-and-sealed-configs")) {
    // Without a key, any key tells whether something encrypted exists ("nothing-encrypted" or not).
    const opens = await checkKeyOpensDatabase(handle.db, key ?? Buffer.alloc(32));
    if (!key && opens !== "nothing-encrypted")
      results.push(
        fail(
          "key opens data",
          "the database holds encrypted values and there is no server key",
          "put back the secret.key (or TERN_SECRET_KEY) this database was written with, from its backup",
        ),
      );
    else if (!key) results.push(ok("key opens data", "nothing encrypted yet"));
    else if (opens === "does-not-open")
      results.push(
        fail(
          "key opens data",
          "the server key does not open the database's encrypted values",
          "use the key this database was written with (secret.key or TERN_SECRET_KEY from its backup)",
        ),
      );
    else
      results.push(
        ok("key opens data", opens === "opens" ? "the server key opens the encrypted values" : "nothing encrypted yet"),
      );
  }
  results.push(await checkClock(handle));
  return results;
}

export async function checkDatabase(config: ServerConfig, key: Buffer | null): Promise<CheckResult[]> {
  if (config.DATABASE_URL) {
    const where = describeDatabaseUrl(config.DATABASE_URL);
    const handle = await openDatabase({ kind: "postgres", url: config.DATABASE_URL, poolSize: 1 });
    try {
      const started = Date.now();
      const version = await withTimeout(
        sql<{ v: string }>`select current_setting('server_version') as v`.execute(handle.db),
        `connecting to ${where}`,
      );
      const reach = ok("database", `PostgreSQL ${version.rows[0]?.v} at ${where} answers in ${Date.now() - started} ms`);
      return [reach, ...(await withTimeout(checkOpen(handle, key), "reading the database"))];
    } catch (err) {
      const e = databaseError(err, config);
      return [fail("database", e?.message ?? (err as Error).message, e?.fix ?? "check DATABASE_URL")];
    } finally {
      await handle.close().catch(() => {});
    }
  }
  if (!(await embeddedDatabaseExists(config)))
    return [
      warn(
        "database",
        `no embedded database in ${pgdataDir(config)} yet`,
        "nothing to do on a new server: it is created at the first start",
      ),
    ];
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(config.TERN_DATA_DIR);
  } catch (err) {
    if (err instanceof DataDirLockedError)
      return [ok("database", `embedded, in use by the running server (pid ${err.pid}); it checked the schema at its start`)];
    return [
      fail(
        "database",
        `cannot lock ${config.TERN_DATA_DIR}: ${(err as Error).message}`,
        "make the data directory writable by this user",
      ),
    ];
  }
  let handle: DatabaseHandle | null = null;
  try {
    handle = await openDatabase({ kind: "pglite", dataDir: pgdataDir(config) });
    await sql`select 1`.execute(handle.db);
    return [ok("database", `embedded (PGlite) in ${pgdataDir(config)}, server stopped`), ...(await checkOpen(handle, key))];
  } catch (err) {
    return [
      fail(
        "database",
        `the embedded database in ${pgdataDir(config)} does not open: ${(err as Error).message}`,
        "restore it from a backup (tern-server restore --force)",
      ),
    ];
  } finally {
    await handle?.close().catch(() => {});
    await lock.release();
  }
}
