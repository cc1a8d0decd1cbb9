/**
 * `tern-server restore <file>`: the database and the server key of a backup
 * into the configured place (an empty data directory, or an empty PostgreSQL
 * database), refusing a non-empty target without --force. Devices come back
 * by themselves: their identities and tokens are in the database.
 */
import { mkdir, readdir, readFile, rename } from "node:fs/promises";
import path from "node:path";
import { sql } from "kysely";
import type { ServerConfig } from "../config.ts";
import { openDatabase } from "../db/database.ts";
import { MIGRATIONS } from "../db/migrate.ts";
import type { Db } from "../db/schema.ts";
import { SERVER_KEY_FILE } from "../secrets/server-key.ts";
import { ArchiveError, type OpenedArchive, openArchive } from "../services/backup/archive.ts";
import { checkKeyOpensDatabase } from "../services/backup/key-check.ts";
import { pgToolMajor } from "../services/backup/pg-tools.ts";
import { RestoreCheckError, restoreEmbedded, restorePostgres } from "../services/backup/restore-database.ts";
import { keyFingerprint, readExistingServerKey, writeServerKeyFile } from "../services/backup/server-key-file.ts";
import { KEY_LOSS, pgToolMissing } from "./backup.ts";
import { CliError } from "./cli-error.ts";
import { lockForCommand, pgdataDir } from "./database.ts";
import type { CliIo } from "./io.ts";
import { type GlobalOptions, loadSettings } from "./settings.ts";
import { databaseError } from "./startup-errors.ts";

export interface RestoreOptions {
  force?: boolean;
  withoutKey?: boolean;
}

/** The key the restored server will use, and whether restore writes it to secret.key. */
interface KeyPlan {
  key: Buffer | null;
  write: boolean;
  note: string;
}

async function planKey(archive: OpenedArchive, config: ServerConfig, options: RestoreOptions): Promise<KeyPlan> {
  const m = archive.manifest.serverKey;
  const archived =
    m.included && m.file ? Buffer.from((await readFile(path.join(archive.dir, m.file), "utf8")).trim(), "base64") : null;
  if (config.TERN_SECRET_KEY) {
    const env = Buffer.from(config.TERN_SECRET_KEY, "base64");
    if (m.fingerprint && keyFingerprint(env) !== m.fingerprint)
      throw new CliError(
        `TERN_SECRET_KEY is not the key of the backed-up server (fingerprint ${keyFingerprint(env)}, the backup's ${m.fingerprint}): ${KEY_LOSS}`,
        archived
          ? "unset TERN_SECRET_KEY (restore then writes the backup's key to secret.key) or set it to the backup's key"
          : "set TERN_SECRET_KEY to the backed-up server's key",
      );
    return { key: env, write: false, note: "server key: TERN_SECRET_KEY (the backup's key)" };
  }
  if (archived)
    return {
      key: archived,
      write: true,
      note: `server key: restored to ${path.join(config.TERN_DATA_DIR, SERVER_KEY_FILE)} (mode 0600)`,
    };
  const existing = await readExistingServerKey({ dataDir: config.TERN_DATA_DIR }).catch(() => null);
  if (existing && m.fingerprint && keyFingerprint(existing.key) === m.fingerprint)
    return { key: existing.key, write: false, note: `server key: ${existing.file} (the backup's key, put there beforehand)` };
  if (!m.fingerprint)
    return { key: null, write: false, note: "server key: none in the backup (the backed-up server had none yet)" };
  if (options.withoutKey)
    return {
      key: null,
      write: false,
      note: `WARNING: restored WITHOUT the server key (fingerprint ${m.fingerprint}): ${KEY_LOSS}`,
    };
  throw new CliError(
    `the backup holds no server key (made with --no-key) and TERN_SECRET_KEY is not set: ${KEY_LOSS}`,
    `set TERN_SECRET_KEY to the old server's key or copy its secret.key into ${config.TERN_DATA_DIR} (fingerprint ${m.fingerprint}); --without-key restores anyway`,
  );
}

/** Entries of the data directory that make it "not empty" (the backup's own key file put there beforehand does not). */
async function dataDirContents(dir: string, backupKeyFingerprint: string | undefined): Promise<string[]> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  const keep: string[] = [];
  for (const e of entries) {
    if (e === "server.pid") continue;
    if (e === SERVER_KEY_FILE && backupKeyFingerprint) {
      const key = await readExistingServerKey({ dataDir: dir }).catch(() => null);
      if (key && keyFingerprint(key.key) === backupKeyFingerprint) continue;
    }
    keep.push(e);
  }
  return keep;
}

async function postgresTables(url: string): Promise<number> {
  const handle = await openDatabase({ kind: "postgres", url, poolSize: 1 });
  try {
    const r = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables
      where table_schema not in ('pg_catalog', 'information_schema')`.execute(handle.db);
    return r.rows[0]?.n ?? 0;
  } finally {
    await handle.close();
  }
}

export async function restore(io: CliIo, globals: GlobalOptions, file: string, options: RestoreOptions): Promise<number> {
  const config = await loadSettings(io, globals);
  const source = path.resolve(io.cwd, file);
  let archive: OpenedArchive;
  try {
    archive = await openArchive(source);
  } catch (err) {
    if (err instanceof ArchiveError)
      throw new CliError(err.message, "check the file name; a backup is made by `tern-server backup`", 1, { cause: err });
    throw err;
  }
  try {
    const m = archive.manifest;
    const newer = m.migrations.filter((name) => !(name in MIGRATIONS));
    if (newer.length)
      throw new CliError(
        `the backup comes from a newer tern-server (${m.serverVersion}, migrations ${newer.join(", ")} unknown here)`,
        `restore it with tern-server ${m.serverVersion} or newer`,
      );
    const target = config.DATABASE_URL ? "postgres" : "pglite";
    if (m.database.kind !== target)
      throw new CliError(
        m.database.kind === "pglite"
          ? "this backup is of an embedded database, and DATABASE_URL names a PostgreSQL database"
          : "this backup is of a PostgreSQL database, and DATABASE_URL is not set (embedded database)",
        m.database.kind === "pglite"
          ? "restore it without DATABASE_URL, into a data directory (--data-dir)"
          : "set DATABASE_URL to an empty PostgreSQL database to restore into",
      );
    const plan = await planKey(archive, config, options);
    const verify = async (db: Db) => {
      if (!plan.key) return;
      if ((await checkKeyOpensDatabase(db, plan.key)) === "does-not-open")
        throw new CliError(
          `the server key does not open the backup's encrypted data: ${KEY_LOSS}`,
          "use the backed-up server's key",
        );
    };

    let replaced: string | null = null;
    if (target === "pglite") {
      const dir = config.TERN_DATA_DIR;
      const contents = await dataDirContents(dir, m.serverKey.fingerprint);
      if (contents.length && !options.force)
        throw new CliError(
          `${dir} is not empty (${contents.slice(0, 5).join(", ")})`,
          "restore into a new or empty data directory, or pass --force (the current database is kept as pgdata.replaced-<time>)",
        );
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const lock = await lockForCommand(config, "restore into it");
      try {
        ({ replacedTo: replaced } = await restoreEmbedded(archive.dir, m, pgdataDir(config), verify));
      } finally {
        await lock.release();
      }
    } else {
      const url = config.DATABASE_URL!;
      await pgToolMajor("pg_restore").catch((err) => pgToolMissing(err, "pg_restore"));
      try {
        const tables = await postgresTables(url);
        if (tables && !options.force)
          throw new CliError(
            `the PostgreSQL database of DATABASE_URL is not empty (${tables} tables)`,
            "restore into a new database (createdb), or pass --force to drop what the backup holds first",
          );
        await restorePostgres(archive.dir, m, url, { clean: tables > 0 }, verify);
      } catch (err) {
        throw databaseError(err, config) ?? err;
      }
    }
    if (plan.write && plan.key) {
      await mkdir(config.TERN_DATA_DIR, { recursive: true, mode: 0o700 });
      const existing = path.join(config.TERN_DATA_DIR, SERVER_KEY_FILE);
      const old = await readExistingServerKey({ dataDir: config.TERN_DATA_DIR }).catch(() => null);
      if (old && !old.key.equals(plan.key)) await rename(existing, `${existing}.replaced-${Date.now()}`);
      await writeServerKeyFile(config.TERN_DATA_DIR, plan.key);
    }

    io.out(`restored ${source}\n`);
    io.out(`  made ${m.createdAt} by tern-server ${m.serverVersion}; ${m.migrations.length} migrations\n`);
    io.out(
      `  rows: ${Object.entries(m.counts)
        .map(([t, n]) => `${t} ${n}`)
        .join(", ")}\n`,
    );
    if (replaced) io.out(`  the database it replaced is kept in ${replaced}\n`);
    (plan.note.startsWith("WARNING") ? io.err : io.out)(`  ${plan.note}\n`);
    io.out("  start the server (tern-server serve); devices reconnect by themselves\n");
    return 0;
  } catch (err) {
    if (err instanceof RestoreCheckError)
      throw new CliError(err.message, "the archive may be damaged; nothing was replaced", 1, { cause: err });
    throw err;
  } finally {
    await archive.close();
  }
}
