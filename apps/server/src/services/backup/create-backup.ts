/**
 * Writes a backup archive of an open database: the embedded database through
 * PGlite's dumpDataDir (the caller holds the data-dir lock, so nothing writes
 * meanwhile), a PostgreSQL database through pg_dump (one snapshot, the server
 * may run), plus the server key and a manifest.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { sql } from "kysely";
import type { DatabaseHandle } from "../../db/database.ts";
import { readMigrationStatus } from "../../db/migration-status.ts";
import type { Db } from "../../db/schema.ts";
import { SERVER_VERSION } from "../../version.ts";
import { sha256File, writeArchive } from "./archive.ts";
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, type BackupManifest, MANIFEST_FILE } from "./manifest.ts";
import { pgDump } from "./pg-tools.ts";
import { type ExistingServerKey, keyFingerprint } from "./server-key-file.ts";

/** Tables whose row counts the manifest records. */
export const COUNTED_TABLES = ["accounts", "organizations", "users", "devices", "tunnels", "peers", "jobs"] as const;

export async function countRows(db: Db): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db);
    counts[table] = r.rows[0]?.n ?? 0;
  }
  return counts;
}

export interface CreateBackupInput {
  handle: DatabaseHandle;
  /** The database URL for pg_dump (PostgreSQL). */
  databaseUrl?: string;
  key: ExistingServerKey | null;
  includeKey: boolean;
  /** A private empty directory to assemble the archive in. */
  workDir: string;
  out: string;
  /** Told when pg_dump failed and is tried again (pg-tools.ts, pgDump). */
  onDumpRetry?: (err: Error) => void;
}

export async function createBackup(input: CreateBackupInput): Promise<BackupManifest> {
  const { handle, workDir } = input;
  const status = await readMigrationStatus(handle.db as never);
  const counts = await countRows(handle.db);
  await mkdir(path.join(workDir, "database"), { mode: 0o700 });

  let database: BackupManifest["database"];
  if (handle.kind === "pglite") {
    const file = "database/pgdata.tar";
    const dump = await handle.pglite!.dumpDataDir();
    await writeFile(path.join(workDir, file), Buffer.from(await dump.arrayBuffer()), { mode: 0o600 });
    database = { kind: "pglite", method: "pglite-datadir", file, ...(await sha256File(path.join(workDir, file))) };
  } else {
    if (!input.databaseUrl) throw new Error("createBackup: a PostgreSQL backup needs the database URL");
    const file = "database/tern.pgdump";
    const version = await sql<{ v: string }>`show server_version`.execute(handle.db);
    await pgDump(input.databaseUrl, path.join(workDir, file), input.onDumpRetry);
    database = {
      kind: "postgres",
      method: "pg_dump",
      file,
      ...(await sha256File(path.join(workDir, file))),
      serverVersion: version.rows[0]?.v ?? "unknown",
    };
  }

  const files = [database.file];
  let serverKey: BackupManifest["serverKey"] = { included: false };
  if (input.key) {
    serverKey = { included: false, fingerprint: keyFingerprint(input.key.key) };
    if (input.includeKey) {
      const file = "server-key/secret.key";
      await mkdir(path.join(workDir, "server-key"), { mode: 0o700 });
      await writeFile(path.join(workDir, file), `${input.key.key.toString("base64")}\n`, { mode: 0o600 });
      serverKey = { ...serverKey, included: true, file, sha256: (await sha256File(path.join(workDir, file))).sha256 };
      files.push(file);
    }
  }

  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    serverVersion: SERVER_VERSION,
    createdAt: new Date().toISOString(),
    database,
    migrations: [...status.applied.map((m) => m.name), ...status.unknown],
    serverKey,
    counts,
  };
  await writeFile(path.join(workDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await writeArchive(workDir, files, input.out);
  return manifest;
}
