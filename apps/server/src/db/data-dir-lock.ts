/**
 * PGlite is one process's database: a second server on the same data
 * directory would corrupt it. A pid file taken with O_EXCL keeps it to one;
 * a pid file left by a dead process is taken over.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

export interface DataDirLock {
  release(): Promise<void>;
}

/** Another live process holds the directory (the CLI turns it into one line with the fix). */
export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`another Tern server (pid ${pid}) is using the embedded database in ${dir}`);
    this.name = "DataDirLockedError";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Directories this process holds (the pid file cannot tell two servers in one process apart). */
const held = new Set<string>();

export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const file = path.join(dir, "server.pid");
  if (held.has(file)) throw new Error(`another Tern server in this process is using the embedded database in ${dir}`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: "wx" });
      held.add(file);
      return {
        release: async () => {
          held.delete(file);
          await rm(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = Number((await readFile(file, "utf8").catch(() => "")).trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new DataDirLockedError(dir, pid);
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`cannot lock ${file}`);
}
