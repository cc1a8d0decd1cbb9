/**
 * A backup archive is one gzip'd tar file (node-tar): manifest.json, the
 * database file and, unless left out, the server key. Written to a temporary
 * name (mode 0600: it may hold the key) and renamed when complete; read back
 * into a private temporary directory with every file's SHA-256 checked.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, mkdtemp, readFile, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import * as tar from "tar";
import { BackupManifest, MANIFEST_FILE } from "./manifest.ts";

export async function sha256File(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return { sha256: hash.digest("hex"), bytes: (await stat(file)).size };
}

/** A private temporary directory (mode 0700) the caller removes. */
export const privateTempDir = (prefix: string) => mkdtemp(path.join(tmpdir(), prefix));

/** Packs `files` (relative to `dir`, manifest.json first) into `out`, atomically, mode 0600. */
export async function writeArchive(dir: string, files: string[], out: string): Promise<void> {
  const partial = `${out}.partial`;
  await tar.c({ gzip: true, file: partial, cwd: dir, portable: true, mode: 0o600 } as tar.TarOptionsWithAliasesFile, [
    MANIFEST_FILE,
    ...files,
  ]);
  await chmod(partial, 0o600);
  await rename(partial, out);
}

export class ArchiveError extends Error {}

export interface OpenedArchive {
  dir: string;
  manifest: BackupManifest;
  close(): Promise<void>;
}

/** Unpacks an archive into a temporary directory and checks its manifest and checksums. */
export async function openArchive(file: string): Promise<OpenedArchive> {
  const dir = await privateTempDir("tern-restore-");
  const close = () => rm(dir, { recursive: true, force: true });
  try {
    await tar.x({ file, cwd: dir, strict: true, preservePaths: false }).catch((err: Error) => {
      throw new ArchiveError(`${file} is not a readable backup archive (${err.message})`);
    });
    const text = await readFile(path.join(dir, MANIFEST_FILE), "utf8").catch(() => {
      throw new ArchiveError(`${file} has no ${MANIFEST_FILE}: not a tern-server backup`);
    });
    const parsed = BackupManifest.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new ArchiveError(
        `${file}: unknown manifest (${parsed.error.issues[0]?.message}): not a backup this version can read`,
      );
    const manifest = parsed.data;
    const expect = [
      { name: manifest.database.file, sha256: manifest.database.sha256 },
      ...(manifest.serverKey.included && manifest.serverKey.file
        ? [{ name: manifest.serverKey.file, sha256: manifest.serverKey.sha256 }]
        : []),
    ];
    for (const f of expect) {
      const inside = path.resolve(dir, f.name);
      if (!inside.startsWith(`${dir}${path.sep}`)) throw new ArchiveError(`${file}: manifest names a file outside the archive`);
      const got = await sha256File(inside).catch(() => null);
      if (!got) throw new ArchiveError(`${file}: ${f.name} is missing`);
      if (got.sha256 !== f.sha256) throw new ArchiveError(`${file}: ${f.name} is damaged (checksum differs)`);
    }
    return { dir, manifest, close };
  } catch (err) {
    await close();
    throw err;
  }
}
