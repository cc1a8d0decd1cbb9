/**
 * `tern-server backup [file]`: one archive with the database, the server key
 * and a manifest. The embedded database is copied under the data-dir lock (the
 * server must be stopped); a PostgreSQL database through pg_dump while it runs.
 */
import { access, rm } from "node:fs/promises";
import path from "node:path";
import { sql } from "kysely";
import { privateTempDir } from "../services/backup/archive.ts";
import { createBackup } from "../services/backup/create-backup.ts";
import { PgToolError, pgToolMajor } from "../services/backup/pg-tools.ts";
import { readExistingServerKey } from "../services/backup/server-key-file.ts";
import { CliError } from "./cli-error.ts";
import { withDatabase } from "./database.ts";
import type { CliIo } from "./io.ts";
import { type GlobalOptions, loadSettings } from "./settings.ts";

export const KEY_LOSS =
  "without it the encrypted secrets (tunnel and peer pre-shared keys, devices' sealed configs, webhook secrets) cannot be read";

export async function serverKeyOrFail(config: { TERN_SECRET_KEY?: string; TERN_DATA_DIR: string }) {
  try {
    return await readExistingServerKey({ secretKey: config.TERN_SECRET_KEY, dataDir: config.TERN_DATA_DIR });
  } catch (err) {
    throw new CliError((err as Error).message, "restore secret.key from a backup, or set TERN_SECRET_KEY", 1, { cause: err });
  }
}

export function pgToolMissing(err: unknown, tool: string): never {
  if (err instanceof PgToolError && err.missing)
    throw new CliError(
      `${tool} is not installed: backups of a PostgreSQL database use pg_dump and pg_restore`,
      "install Debian's postgresql-client (apt-get install postgresql-client), of the database server's major version or newer",
      1,
      { cause: err },
    );
  throw err;
}

export interface BackupOptions {
  key: boolean;
  force?: boolean;
}

export async function backup(
  io: CliIo,
  globals: GlobalOptions,
  file: string | undefined,
  options: BackupOptions,
): Promise<number> {
  const config = await loadSettings(io, globals);
  const out = path.resolve(io.cwd, file ?? `tern-backup-${new Date().toISOString().replace(/[:.]/g, "-")}.tar.gz`);
  const taken = await access(out).then(
    () => true,
    () => false,
  );
  if (taken && !options.force) throw new CliError(`${out} exists`, "choose another file name or pass --force to overwrite it");
  const key = await serverKeyOrFail(config);
  const dumpMajor = config.DATABASE_URL ? await pgToolMajor("pg_dump").catch((err) => pgToolMissing(err, "pg_dump")) : null;

  const workDir = await privateTempDir("tern-backup-");
  try {
    const manifest = await withDatabase(config, { what: "back it up", requireExisting: true }, async (handle) => {
      if (dumpMajor !== null) {
        const v = await sql<{ n: number }>`select current_setting('server_version_num')::int as n`.execute(handle.db);
        const serverMajor = Math.floor((v.rows[0]?.n ?? 0) / 10_000);
        if (serverMajor > dumpMajor)
          throw new CliError(
            `pg_dump ${dumpMajor} cannot dump a PostgreSQL ${serverMajor} database`,
            `install postgresql-client-${serverMajor} (PGDG's apt repository has every major)`,
          );
      }
      return createBackup({
        handle,
        ...(config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : {}),
        key,
        includeKey: options.key,
        workDir,
        out,
        onDumpRetry: (err) => io.err(`note: ${err.message}; trying again (the running server may have changed its schema)\n`),
      });
    });
    const db = manifest.database;
    io.out(`backup written to ${out}\n`);
    io.out(
      `  database: ${db.kind === "pglite" ? "embedded (PGlite data directory)" : `PostgreSQL ${db.serverVersion} (pg_dump)`}, ${db.bytes} bytes\n`,
    );
    io.out(`  schema: ${manifest.migrations.length} migrations, the last ${manifest.migrations.at(-1) ?? "none"}\n`);
    io.out(
      `  rows: ${Object.entries(manifest.counts)
        .map(([t, n]) => `${t} ${n}`)
        .join(", ")}\n`,
    );
    if (!key) io.err("note: there is no server key yet (the server makes one at its first start); nothing encrypted can exist\n");
    else if (manifest.serverKey.included)
      io.err(
        `WARNING: the archive holds the server key (fingerprint ${manifest.serverKey.fingerprint}): whoever has it can read the encrypted secrets. Keep it like a password (it is written with mode 0600).\n`,
      );
    else
      io.err(
        `WARNING: the archive does NOT hold the server key (fingerprint ${manifest.serverKey.fingerprint}). Keep ${key.source === "environment" ? "TERN_SECRET_KEY" : key.file} safe elsewhere: ${KEY_LOSS}.\n`,
      );
    return 0;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
