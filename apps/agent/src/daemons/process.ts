/**
 * Process liveness through the runner. `kill -0` is not enough: a daemon that
 * exited but was not reaped (the lab's pid 1 does not reap orphans) still
 * "exists", so liveness reads `ps -o stat=` and treats `Z` as dead. The
 * command name is checked too, so a recycled pid is never mistaken for ours.
 */
import { readFile } from "node:fs/promises";
import type { Runner } from "../runner.ts";

export interface ProcessInfo {
  pid: number;
  /** ps STAT, e.g. "Ss", "Sl", "Z". */
  stat: string;
  /** ps COMM (at most 15 characters). */
  comm: string;
}

/** The pid in a pid file, or null when the file is missing or holds no pid. */
export async function readPidFile(path: string): Promise<number | null> {
  const text = await readFile(path, "utf8").catch(() => null);
  if (text === null) return null;
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 1 ? pid : null;
}

/** What ps says about `pid`, or null when there is no such process. */
export async function processInfo(runner: Runner, pid: number): Promise<ProcessInfo | null> {
  const r = await runner.run(["ps", "-o", "stat=,comm=", "-p", String(pid)], { allowFailure: true });
  const line = r.stdout.trim();
  if (r.exitCode !== 0 || line === "") return null;
  const [stat = "", ...comm] = line.split(/\s+/);
  return { pid, stat, comm: comm.join(" ") };
}

/** True when `pid` runs (not a zombie) and, if given, has command name `comm`. */
export async function isRunning(runner: Runner, pid: number, comm?: string): Promise<boolean> {
  const info = await processInfo(runner, pid);
  if (!info || info.stat.startsWith("Z")) return false;
  return comm === undefined || info.comm === comm.slice(0, 15);
}

/** Sends `signal` (TERM, KILL, HUP, …) to `pid`; false when the process is already gone. */
export async function signalProcess(runner: Runner, pid: number, signal: string): Promise<boolean> {
  const r = await runner.run(["kill", "-s", signal, String(pid)], { allowFailure: true });
  return r.exitCode === 0;
}
