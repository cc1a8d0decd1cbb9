/**
 * A small supervisor for daemons the agent runs itself (standalone mode):
 * per-instance argv, pid file and readiness socket; start, wait until ready,
 * signal (reload), stop with TERM then KILL. Daemons outlive the agent: the
 * pid file is how a restarted agent finds them again. Everything goes through
 * the runner, so a recording fake runner sees every step.
 */
import { readFile, rm } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { AgentError } from "../errors.ts";
import { isRunning, processInfo, readPidFile, signalProcess } from "../process.ts";
import type { Runner } from "../runner.ts";
import { pollUntil } from "./wait.ts";

export interface DaemonSpec {
  /** Name for logs and errors ("charon", "zebra"). */
  name: string;
  /** Process name as ps shows it, to tell our daemon from a process that reuses its pid. */
  comm: string;
  /** Absolute path of the program and its arguments. */
  argv: string[];
  env?: Record<string, string>;
  /** Where the daemon's pid is recorded. */
  pidFile: string;
  /**
   * `forks`: the daemon detaches itself and writes `pidFile` (zebra -d).
   * `foreground`: it stays in the foreground; start-stop-daemon backgrounds it
   * and, unless `writesPidFile`, records its pid.
   */
  launch: "forks" | "foreground";
  /** The daemon writes `pidFile` itself (kea, keepalived); only for `foreground`. */
  writesPidFile?: boolean;
  /** Where a foreground daemon's stdout and stderr go. */
  outputFile?: string;
  /** A unix socket that exists once the daemon accepts requests. */
  readySocket?: string;
  /**
   * Other files the daemon leaves behind that make a restart refuse to run,
   * e.g. pid files of its children (keepalived checks them with kill(pid, 0),
   * which succeeds for an unreaped zombie).
   */
  staleFiles?: string[];
  /** A log file whose tail goes into start errors. */
  logFile?: string;
  readyTimeoutMs?: number;
  /**
   * How long a daemon must stay running before it counts as started (supervisord's `startsecs`): one that
   * exits on a bad configuration can still be running at the first look. Default DEFAULT_SETTLE_MS without
   * `readySocket`, none with one (a daemon that made its socket got past its configuration).
   */
  settleMs?: number;
  stopTimeoutMs?: number;
}

/** A daemon without a readiness socket is started once it is still running this long after it was first seen. */
export const DEFAULT_SETTLE_MS = 250;

/** The argv that starts `spec` in the background. */
export function launchArgv(spec: DaemonSpec): string[] {
  if (spec.launch === "forks") return spec.argv;
  const [program, ...args] = spec.argv;
  if (!program?.startsWith("/")) throw new Error(`${spec.name}: program must be an absolute path`);
  return [
    "start-stop-daemon",
    "--start",
    "--background",
    "--pidfile",
    spec.pidFile,
    ...(spec.writesPidFile ? [] : ["--make-pidfile"]),
    ...(spec.outputFile ? ["--output", spec.outputFile] : []),
    "--exec",
    program,
    "--",
    ...args,
  ];
}

/** The pid of the running daemon, or null when it is not running (missing pid file, dead, zombie or another program). */
export async function daemonPid(runner: Runner, spec: DaemonSpec): Promise<number | null> {
  const pid = await readPidFile(spec.pidFile);
  if (pid === null) return null;
  return (await isRunning(runner, pid, { comm: spec.comm })) ? pid : null;
}

async function socketExists(runner: Runner, path: string): Promise<boolean> {
  return (await runner.run(["test", "-S", path], { allowFailure: true })).exitCode === 0;
}

async function tail(path: string | undefined, lines = 15): Promise<string> {
  if (!path) return "";
  const text = await readFile(path, "utf8").catch(() => "");
  const last = text.trimEnd().split("\n").slice(-lines).join("\n");
  return last ? `\n--- last lines of ${path}:\n${last}` : "";
}

/**
 * Starts `spec` and waits until it runs and its socket (if any) exists.
 * Throws DAEMON_FAILED with the tail of its output or log when it dies or
 * does not become ready in time. Returns the pid.
 */
export async function startDaemon(runner: Runner, spec: DaemonSpec): Promise<number> {
  // Left behind by a crash: a stale socket would pass the readiness check, a
  // stale pid file can make a daemon think it already runs.
  for (const f of [spec.pidFile, ...(spec.readySocket ? [spec.readySocket] : []), ...(spec.staleFiles ?? [])])
    await rm(f, { force: true });
  await runner.run(launchArgv(spec), { env: spec.env, timeoutMs: 20_000 });
  let pid: number | null = null;
  let died = false;
  const ready = await pollUntil(async () => {
    const seen = await readPidFile(spec.pidFile);
    if (seen === null) return false;
    const info = await processInfo(runner, seen);
    if (!info || info.stat.startsWith("Z")) {
      died = true;
      return true;
    }
    // start-stop-daemon writes the pid file before it execs the daemon: until
    // then the process still has the launcher's name.
    if (info.command !== spec.comm.slice(0, 15)) return false;
    pid = seen;
    return spec.readySocket ? socketExists(runner, spec.readySocket) : true;
  }, spec.readyTimeoutMs ?? 10_000);
  const settleMs = spec.settleMs ?? (spec.readySocket ? 0 : DEFAULT_SETTLE_MS);
  if (ready && !died && pid !== null && settleMs > 0) {
    await sleep(settleMs);
    if (!(await isRunning(runner, pid, { comm: spec.comm }))) died = true;
  }
  if (!ready || died || pid === null) {
    const why = died ? "exited right after start" : `did not become ready within ${spec.readyTimeoutMs ?? 10_000} ms`;
    throw new AgentError("DAEMON_FAILED", `${spec.name} ${why}${await tail(spec.outputFile)}${await tail(spec.logFile)}`);
  }
  return pid;
}

/** Starts `spec` unless it already runs; `started` tells which. */
export async function ensureDaemon(runner: Runner, spec: DaemonSpec): Promise<{ pid: number; started: boolean }> {
  const pid = await daemonPid(runner, spec);
  if (pid !== null) return { pid, started: false };
  return { pid: await startDaemon(runner, spec), started: true };
}

/**
 * Stops `spec`: TERM, wait, then KILL. Removes its pid file and socket.
 * Returns true when a running daemon was stopped.
 */
export async function stopDaemon(runner: Runner, spec: DaemonSpec): Promise<boolean> {
  const pid = await daemonPid(runner, spec);
  if (pid !== null) {
    await signalProcess(runner, pid, "TERM");
    const gone = () => isRunning(runner, pid, { comm: spec.comm }).then((alive) => !alive);
    if (!(await pollUntil(gone, spec.stopTimeoutMs ?? 5_000))) {
      await signalProcess(runner, pid, "KILL");
      if (!(await pollUntil(gone, 3_000))) throw new AgentError("DAEMON_FAILED", `${spec.name} (pid ${pid}) survived SIGKILL`);
    }
  }
  for (const f of [spec.pidFile, ...(spec.readySocket ? [spec.readySocket] : []), ...(spec.staleFiles ?? [])])
    await rm(f, { force: true });
  return pid !== null;
}

/** Sends `signal` to the running daemon (HUP = reload for keepalived and kea). False when it does not run. */
export async function signalDaemon(runner: Runner, spec: DaemonSpec, signal: string): Promise<boolean> {
  const pid = await daemonPid(runner, spec);
  return pid !== null && (await signalProcess(runner, pid, signal));
}
