/**
 * pg_dump and pg_restore (Debian's postgresql-client) for backups of a
 * PostgreSQL database. One runner: argv arrays, LC_ALL=C, a time limit, the
 * password in PGPASSWORD rather than on the command line, argv and stderr in
 * every error.
 */
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";

export class PgToolError extends Error {
  constructor(
    message: string,
    readonly missing = false,
  ) {
    super(message);
  }
}

/** The URL without its password, and the password for PGPASSWORD (ps shows argv to every user). */
function splitPassword(url: string): { url: string; password?: string } {
  const u = new URL(url);
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  u.password = "";
  return { url: u.toString(), ...(password !== undefined ? { password } : {}) };
}

function run(tool: string, args: string[], password: string | undefined, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      tool,
      args,
      {
        env: { ...process.env, LC_ALL: "C", ...(password !== undefined ? { PGPASSWORD: password } : {}) },
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return reject(new PgToolError(`${tool} is not installed`, true));
        reject(new PgToolError(`${tool} ${args.join(" ")} failed: ${stderr.trim() || err.message}`));
      },
    );
  });
}

/** The major version of an installed tool (`pg_dump (PostgreSQL) 15.18 …` → 15). */
export async function pgToolMajor(tool: "pg_dump" | "pg_restore"): Promise<number> {
  const out = await run(tool, ["--version"], undefined, 10_000);
  const major = Number(/\)\s+(\d+)/.exec(out)?.[1]);
  if (!Number.isInteger(major)) throw new PgToolError(`cannot read the version of ${tool}: ${out.trim()}`);
  return major;
}

/** Tries of pg_dump before a backup fails, and the pause between them. */
export const PG_DUMP_TRIES = 3;
const PG_DUMP_RETRY_MS = 2000;

/**
 * A consistent dump (one snapshot, the server may keep running) in pg_dump's custom format. A running server
 * changes its schema by itself (the statistics duty creates and drops hourly partitions, many at once after a
 * start), and pg_dump fails when a table it listed changes before it locks it: such a dump is tried again, up
 * to PG_DUMP_TRIES times; `onRetry` hears each failure that is tried again. A missing pg_dump fails at once.
 */
export async function pgDump(databaseUrl: string, file: string, onRetry?: (err: PgToolError) => void): Promise<void> {
  const { url, password } = splitPassword(databaseUrl);
  for (let attempt = 1; ; attempt++) {
    try {
      await run(
        "pg_dump",
        ["--format=custom", "--no-owner", "--no-privileges", `--file=${file}`, `--dbname=${url}`],
        password,
        3_600_000,
      );
      return;
    } catch (err) {
      if (!(err instanceof PgToolError) || err.missing || attempt >= PG_DUMP_TRIES) throw err;
      onRetry?.(err);
      await new Promise((r) => setTimeout(r, PG_DUMP_RETRY_MS));
    }
  }
}

/**
 * Restores a custom-format dump in one transaction; `clean` replaces what the database holds. pg_restore's own
 * `--clean` cannot do that with partitioned tables (the statistics history): it drops each partition's
 * inherited primary key on its own, which PostgreSQL refuses. So a clean restore is pg_restore writing the
 * dump as SQL, and psql running, in ONE transaction, `DROP SCHEMA public CASCADE; CREATE SCHEMA public` and
 * that SQL: a failure anywhere leaves the database as it was.
 */
export async function pgRestore(databaseUrl: string, file: string, options: { clean: boolean }): Promise<void> {
  const { url, password } = splitPassword(databaseUrl);
  if (!options.clean) {
    await run(
      "pg_restore",
      ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", `--dbname=${url}`, file],
      password,
      3_600_000,
    );
    return;
  }
  const script = `${file}.sql`;
  try {
    await run("pg_restore", ["--no-owner", "--no-privileges", `--file=${script}`, file], undefined, 3_600_000);
    await run(
      "psql",
      [
        "--no-psqlrc",
        "--quiet",
        "--single-transaction",
        "--set=ON_ERROR_STOP=1",
        "--command=DROP SCHEMA public CASCADE; CREATE SCHEMA public;",
        `--file=${script}`,
        `--dbname=${url}`,
      ],
      password,
      3_600_000,
    );
  } finally {
    await rm(script, { force: true });
  }
}
