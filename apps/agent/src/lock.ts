/**
 * A pid lock file: `run` and `apply` hold it so two reconcilers never change
 * the system at once. A lock left by a killed process (kill -9, power loss)
 * is taken over once its pid is gone.
 */
import { mkdir, open, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { AgentError } from "./errors.ts";
import { pidAlive, readPidFile } from "./process.ts";

export interface PidLock {
  readonly path: string;
  release(): Promise<void>;
}

/** Takes the lock or throws LOCKED naming the holder. */
export async function acquirePidLock(path: string, what: string): Promise<PidLock> {
  await mkdir(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(path, "wx", 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        path,
        async release() {
          if ((await readPidFile(path)) === process.pid) await unlink(path).catch(() => {});
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = await readPidFile(path);
      if (holder !== null && holder !== process.pid && pidAlive(holder))
        throw new AgentError("LOCKED", `another tern-agent (pid ${holder}) holds ${path}; stop it before ${what}`);
      // Stale: its process is gone. Remove and retry; a racing taker wins through O_EXCL.
      await unlink(path).catch(() => {});
    }
  }
  throw new AgentError("LOCKED", `could not take ${path}`);
}
