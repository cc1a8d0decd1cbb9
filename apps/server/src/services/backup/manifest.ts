/** manifest.json of a backup archive: what it holds and what it needs to be restored. */
import { z } from "zod";

export const BACKUP_FORMAT = "tern-server-backup";
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_FILE = "manifest.json";

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const BackupManifest = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  formatVersion: z.literal(BACKUP_FORMAT_VERSION),
  /** The tern-server version that wrote it. */
  serverVersion: z.string(),
  createdAt: z.iso.datetime(),
  database: z.strictObject({
    kind: z.enum(["pglite", "postgres"]),
    /** pglite-datadir: PGlite's dumpDataDir tarball; pg_dump: pg_dump --format=custom. */
    method: z.enum(["pglite-datadir", "pg_dump"]),
    file: z.string(),
    sha256: Sha256,
    bytes: z.number().int().nonnegative(),
    /** PostgreSQL's version of the dumped server (pg_dump only). */
    serverVersion: z.string().optional(),
  }),
  /** The schema migrations the database had, in order. */
  migrations: z.array(z.string()),
  serverKey: z.strictObject({
    included: z.boolean(),
    file: z.string().optional(),
    sha256: Sha256.optional(),
    /** keyFingerprint() of the key, also when it is not included (to recognise the right one). */
    fingerprint: z.string().optional(),
  }),
  /** Rows of a few tables, shown before a restore and checked after it. */
  counts: z.record(z.string(), z.number().int().nonnegative()),
});
export type BackupManifest = z.infer<typeof BackupManifest>;
