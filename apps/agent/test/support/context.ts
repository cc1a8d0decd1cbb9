/**
 * The one DriverContext factory for tests: temporary state/run directories,
 * a logger that keeps what it was told (`logs` as text lines, `records`
 * structured) and the `notify()` reasons drivers gave.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverContext } from "../../src/drivers/driver.ts";
import { memoryLogger } from "../../src/log.ts";
import type { Runner } from "../../src/runner.ts";

export interface TempDirs {
  root: string;
  stateDir: string;
  runDir: string;
  remove(): Promise<void>;
}

/** A temporary `root` with `state/` and `run/` below it (not created); traversable by daemons that drop privileges (frr). */
export async function tempDirs(label = "agent"): Promise<TempDirs> {
  const root = await mkdtemp(join(tmpdir(), `tern-${label}-`));
  await chmod(root, 0o755);
  return {
    root,
    stateDir: join(root, "state"),
    runDir: join(root, "run"),
    // Retried: a daemon or a last write of a stopping agent may still add a file while the tree goes
    // (ENOTEMPTY, seen in CI); Node's rm retries those errors.
    remove: () => rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }),
  };
}

export interface TestContext extends DriverContext {
  /** Log lines as `level message {fields}`. */
  readonly logs: string[];
  records: { level: string; msg: string; fields?: Record<string, unknown> }[];
  /** What drivers passed to notify(), with the time. */
  notes: { reason: string; at: number }[];
}

/**
 * A standalone-mode context over `dirs` (a path: state and run dir are that
 * one directory); `extra` overrides fields (mode, controlServer, …).
 */
export function driverContext(
  runner: Runner,
  dirs: Pick<TempDirs, "stateDir" | "runDir"> | string,
  extra: Partial<DriverContext> = {},
): TestContext {
  const { stateDir, runDir } = typeof dirs === "string" ? { stateDir: dirs, runDir: dirs } : dirs;
  const log = memoryLogger();
  const notes: TestContext["notes"] = [];
  return {
    runner,
    mode: "standalone",
    stateDir,
    runDir,
    log,
    records: log.records,
    get logs() {
      return log.records.map(
        (r) => `${r.level} ${r.msg}${r.fields && Object.keys(r.fields).length ? ` ${JSON.stringify(r.fields)}` : ""}`,
      );
    },
    notes,
    notify: (reason) => notes.push({ reason, at: Date.now() }),
    ...extra,
  };
}

export type DisposableContext = TestContext & { dirs: TempDirs; dispose(): Promise<void> };

/** driverContext over fresh temporary directories; `dispose()` removes them. */
export async function testContext(runner: Runner, extra: Partial<DriverContext> = {}): Promise<DisposableContext> {
  const dirs = await tempDirs("agent-test");
  return Object.assign(driverContext(runner, dirs, extra), { dirs, dispose: () => dirs.remove() });
}
