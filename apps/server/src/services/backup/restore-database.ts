/**
 * Puts a backup's database in place. The embedded database is unpacked into a
 * staging directory beside the target, checked (row counts, the caller's
 * checks) and only then renamed to <data dir>/pgdata, so a failed restore
 * leaves the target as it was. A PostgreSQL dump goes through pg_restore in
 * one transaction.
 */
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { openDatabase } from "../../db/database.ts";
import type { Db } from "../../db/schema.ts";
import { countRows } from "./create-backup.ts";
import type { BackupManifest } from "./manifest.ts";
import { pgRestore } from "./pg-tools.ts";

export class RestoreCheckError extends Error {}

/** Fails when the restored rows differ from what the manifest recorded. */
export async function checkCounts(db: Db, manifest: BackupManifest): Promise<Record<string, number>> {
  const counts = await countRows(db);
  const differing = Object.entries(manifest.counts).filter(([t, n]) => counts[t] !== n);
  if (differing.length)
    throw new RestoreCheckError(
      `the restored database differs from the backup: ${differing.map(([t, n]) => `${t} ${counts[t]} instead of ${n}`).join(", ")}`,
    );
  return counts;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

/**
 * Restores a pglite-datadir backup into `pgdata`; an existing one is kept as
 * <pgdata>.replaced-<time> (only with force: the caller checks). Returns where
 * the replaced one went, if any.
 */
export async function restoreEmbedded(
  archiveDir: string,
  manifest: BackupManifest,
  pgdata: string,
  verify: (db: Db) => Promise<void>,
): Promise<{ replacedTo: string | null }> {
  const staging = `${pgdata}.restoring-${randomBytes(4).toString("hex")}`;
  try {
    const dump = await readFile(path.join(archiveDir, manifest.database.file));
    const handle = await openDatabase({ kind: "pglite", dataDir: staging, loadDataDir: new Blob([dump]) });
    try {
      await checkCounts(handle.db, manifest);
      await verify(handle.db);
    } finally {
      await handle.close();
    }
    let replacedTo: string | null = null;
    if (await exists(pgdata)) {
      replacedTo = `${pgdata}.replaced-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      await rename(pgdata, replacedTo);
    }
    await rename(staging, pgdata);
    return { replacedTo };
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

/** Restores a pg_dump backup into the database of `url` (clean: drop what the dump holds first). */
export async function restorePostgres(
  archiveDir: string,
  manifest: BackupManifest,
  url: string,
  options: { clean: boolean },
  verify: (db: Db) => Promise<void>,
): Promise<void> {
  await pgRestore(url, path.join(archiveDir, manifest.database.file), options);
  const handle = await openDatabase({ kind: "postgres", url, poolSize: 1 });
  try {
    await checkCounts(handle.db, manifest);
    await verify(handle.db);
  } finally {
    await handle.close();
  }
}
