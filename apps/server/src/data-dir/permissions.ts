/**
 * The data directory holds the embedded database (password hashes, sealed
 * configs), the generated server key and the pid file: nobody but the server's
 * own user may read or change any of it. Directory 0700, files 0600.
 *
 * Three parts:
 * - the process umask is 077 before anything is created, so new directories
 *   are 0700 and new files at most 0700;
 * - at start the whole tree is checked; anything open to group or others
 *   stops the start with one line that says how to fix it (a key or a
 *   database someone else could have read or swapped is not ours to trust
 *   silently);
 * - after the embedded database opened (db/database.ts, whoever opens it:
 *   the server, the bench's seeder), its files are tightened: PGlite unpacks
 *   a new database with explicit 0666 modes (chmod, which the umask does not
 *   limit).
 */
import { chmod, lstat, mkdir, readdir, stat } from "node:fs/promises";
import path from "node:path";

/** Mode bits that let anyone but the owner in. */
const OPEN_TO_OTHERS = 0o077;

/**
 * Sets the process umask to 077. A worker thread cannot (Node refuses); its
 * files are still tightened and checked, so that is not an error.
 */
export function restrictUmask(): void {
  try {
    process.umask(0o077);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_WORKER_UNSUPPORTED_OPERATION") throw err;
  }
}

export interface LoosePath {
  path: string;
  mode: number;
}

/** Every entry under `dir` (itself included; symbolic links are not followed) that group or others can use. */
export async function findLoosePaths(dir: string): Promise<{ loose: LoosePath[]; total: number }> {
  const loose: LoosePath[] = [];
  let total = 0;
  const visit = async (p: string, root: boolean) => {
    // The directory itself may be a link to where the operator keeps it; below it, links are not followed.
    const s = await (root ? stat(p) : lstat(p)).catch((err: NodeJS.ErrnoException) => {
      // A running database may remove a file between readdir and lstat.
      if (!root && err.code === "ENOENT") return null;
      throw err;
    });
    if (!s || s.isSymbolicLink()) return;
    total++;
    if (s.mode & OPEN_TO_OTHERS) loose.push({ path: p, mode: s.mode & 0o7777 });
    if (s.isDirectory()) {
      const names = await readdir(p).catch((err: NodeJS.ErrnoException) => {
        if (!root && err.code === "ENOENT") return [];
        throw err;
      });
      for (const name of names) await visit(path.join(p, name), false);
    }
  };
  await visit(dir, true);
  return { loose, total };
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, "0")}`;
const quoted = (p: string) => `'${p.replaceAll("'", "'\\''")}'`;

/** The data directory or something in it is open to other users. Its message is one line with the command that fixes it. */
export class DataDirPermissionsError extends Error {
  constructor(
    readonly dir: string,
    readonly loose: LoosePath[],
    total: number,
  ) {
    const first = loose[0] as LoosePath;
    super(
      `the data directory ${dir} is open to other users (${loose.length} of ${total} entries, e.g. ${first.path} mode ${octal(first.mode)}); ` +
        `fix it with: chmod -R go-rwx ${quoted(dir)}`,
    );
    this.name = "DataDirPermissionsError";
  }
}

/** Creates `dir` (mode 0700) when it is missing, then refuses it when anything in it is open to group or others. */
export async function assertPrivateDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { loose, total } = await findLoosePaths(dir);
  if (loose.length) throw new DataDirPermissionsError(dir, loose, total);
}

/** Removes group and other bits from everything under `dir` (what this process just created); returns how many it changed. */
export async function tightenDataDir(dir: string): Promise<number> {
  const { loose } = await findLoosePaths(dir);
  for (const p of loose) await chmod(p.path, p.mode & ~OPEN_TO_OTHERS);
  return loose.length;
}
