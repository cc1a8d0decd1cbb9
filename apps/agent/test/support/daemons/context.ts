/** A DriverContext for tests: a runner, a temp runDir, a logger that keeps lines, and recorded notify() reasons. */
import type { DaemonMode, DriverContext, Logger } from "../../../src/drivers/driver.ts";
import type { Runner } from "../../../src/runner.ts";

export interface TestContext extends DriverContext {
  logs: string[];
  notes: { reason: string; at: number }[];
}

export function testContext(runner: Runner, runDir: string, mode: DaemonMode = "standalone"): TestContext {
  const logs: string[] = [];
  const line =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      logs.push(`${level} ${msg}${fields ? ` ${JSON.stringify(fields)}` : ""}`);
    };
  const log: Logger = { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
  const notes: { reason: string; at: number }[] = [];
  return { runner, mode, runDir, stateDir: runDir, log, logs, notes, notify: (reason) => notes.push({ reason, at: Date.now() }) };
}
