/** `tern-agent apply CONFIG.json`: one reconcile without a server (labs, recovery); it becomes the last good config. */
import { acquirePidLock } from "../lock.ts";
import { createLogger } from "../log.ts";
import { type ReconcileOutcome, Reconciler, StateStore } from "../reconcile/index.ts";
import { type CliDeps, pathsOf, readConfigFile } from "./deps.ts";

export async function apply({ options, runner, drivers, io }: CliDeps): Promise<number> {
  const config = await readConfigFile(options.args[0]);
  const paths = pathsOf(options);
  const log = createLogger(options.logLevel, paths.logFile, { stderrLevel: "warn" }).child({ command: "apply" });
  const lock = await acquirePidLock(paths.lock, "applying a config (stop tern-agent run first)");
  try {
    const reconciler = new Reconciler({
      drivers,
      context: { runner, mode: options.mode, stateDir: paths.stateDir, runDir: paths.runDir, log, notify() {} },
      store: new StateStore(paths, log),
      log,
      oneShot: true,
    });
    await reconciler.init();
    if (reconciler.interrupted)
      io.err(`note: the previous apply (${reconciler.interrupted.hash}) was interrupted; this one replaces it\n`);
    const outcome = await reconciler.submit(config, { source: "cli apply" });
    io.out(options.json ? `${JSON.stringify(outcome, null, 2)}\n` : describeOutcome(outcome));
    return outcome.ok ? 0 : 1;
  } finally {
    // The policy loop and the VRRP watch were started for a daemon that is not running: stop them.
    for (const d of drivers) await Promise.resolve(d.close?.()).catch(() => {});
    log.flush();
    await lock.release();
  }
}

export function describeOutcome(o: ReconcileOutcome): string {
  const ms = Date.parse(o.finishedAt) - Date.parse(o.startedAt);
  const head = o.ok
    ? `applied ${o.hash} in ${ms} ms`
    : `apply failed: ${o.error}${o.rolledBack ? `\nrolled back to ${o.appliedHash ?? (o.error?.includes("rollback failed") ? "an unknown state" : "the empty config")}` : ""}`;
  const row = (r: ReconcileOutcome["drivers"][number]) =>
    `  ${r.driver.padEnd(9)} ${r.ok ? "ok    " : "FAILED"} ${r.changed ? "changed  " : "unchanged"} ${String(r.durationMs).padStart(6)} ms${r.error ? `  ${r.error}` : ""}`;
  return [head, ...o.drivers.map(row), ...(o.rollback.length ? ["rollback:", ...o.rollback.map(row)] : []), ""].join("\n");
}
