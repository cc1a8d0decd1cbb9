/** Driver contexts over temporary state/run directories for tests. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverContext, Logger } from "../../src/drivers/driver.ts";
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

export interface TestContext extends DriverContext {
  notes: string[];
  logs: { level: string; msg: string; fields?: Record<string, unknown> }[];
  dispose(): Promise<void>;
}

export async function testContext(runner: Runner, extra: Partial<DriverContext> = {}): Promise<TestContext> {
  const dir = await mkdtemp(join(tmpdir(), "tern-agent-net-"));
  const logs: TestContext["logs"] = [];
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    logs.push({ level, msg, fields });
  };
  const logger: Logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
  const notes: string[] = [];
  return {
    runner,
    mode: "standalone",
    stateDir: join(dir, "state"),
    runDir: join(dir, "run"),
    log: logger,
    notify: (reason) => notes.push(reason),
    notes,
    logs,
    dispose: () => rm(dir, { recursive: true, force: true }),
    ...extra,
  };
}
