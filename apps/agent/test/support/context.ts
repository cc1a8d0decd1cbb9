/** Driver contexts over temporary state/run directories for tests. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverContext } from "../../src/drivers/driver.ts";
import { silentLogger } from "../../src/log.ts";
import type { Runner } from "../../src/runner.ts";

export interface TempDirs {
  root: string;
  stateDir: string;
  runDir: string;
  remove(): Promise<void>;
}

export async function tempDirs(label = "agent"): Promise<TempDirs> {
  const root = await mkdtemp(join(tmpdir(), `tern-${label}-`));
  return {
    root,
    stateDir: join(root, "state"),
    runDir: join(root, "run"),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

export function driverContext(
  runner: Runner,
  dirs: Pick<TempDirs, "stateDir" | "runDir">,
  extra: Partial<DriverContext> = {},
): DriverContext {
  return { runner, mode: "standalone", stateDir: dirs.stateDir, runDir: dirs.runDir, log: silentLogger, notify() {}, ...extra };
}
