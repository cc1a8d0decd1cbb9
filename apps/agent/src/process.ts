/**
 * Is a process alive, and is it the one we think it is? Pid files outlive
 * their processes and pids get reused, so every check reads the process's
 * state (a zombie, `Z`, is dead: the lab's pid 1 does not reap orphans) and,
 * where asked, its command name or command line.
 *
 * Daemons and clients the drivers start are checked through the Runner
 * (`ps`), so a recording fake runner models them; the agent's own pid lock
 * uses `pidAlive`, which reads /proc directly and needs no runner.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Runner } from "./runner.ts";

export interface ProcessInfo {
  pid: number;
  /** ps STAT, e.g. "Ss", "Sl", "Z". */
  stat: string;
  /** ps COMM (at most 15 characters), or the whole command line when asked for `args`. */
  command: string;
}

/** The pid in a pid file, or null when the file is missing or holds no usable pid (pid 1 never counts). */
export async function readPidFile(path: string): Promise<number | null> {
  const text = await readFile(path, "utf8").catch(() => null);
  if (text === null) return null;
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 1 ? pid : null;
}

/** True when `pid` runs (read from /proc, no runner); a zombie does not count. */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** What ps says about `pid` (its state and command name, or command line with `field: "args"`); null when there is no such process. */
export async function processInfo(runner: Runner, pid: number, field: "comm" | "args" = "comm"): Promise<ProcessInfo | null> {
  const r = await runner.run(["ps", "-o", `stat=,${field}=`, "-p", String(pid)], { allowFailure: true });
  const line = r.stdout.trim();
  if (r.exitCode !== 0 || line === "") return null;
  const [stat = "", ...command] = line.split(/\s+/);
  return { pid, stat, command: command.join(" ") };
}

/** What identifies our process: its command name (15 characters at most, as ps shows it) or a text its command line contains. */
export type ProcessIdentity = { comm: string } | { argsInclude: string };

/** True when `pid` runs (not a zombie) and, if given, is the process `identity` describes. */
export async function isRunning(runner: Runner, pid: number, identity?: ProcessIdentity): Promise<boolean> {
  const byArgs = identity !== undefined && "argsInclude" in identity;
  const info = await processInfo(runner, pid, byArgs ? "args" : "comm");
  if (!info || info.stat.startsWith("Z")) return false;
  if (identity === undefined) return true;
  return "comm" in identity ? info.command === identity.comm.slice(0, 15) : info.command.includes(identity.argsInclude);
}

/** Sends `signal` (TERM, KILL, HUP, …) to `pid`; false when the process is already gone. */
export async function signalProcess(runner: Runner, pid: number, signal: string): Promise<boolean> {
  const r = await runner.run(["kill", "-s", signal, String(pid)], { allowFailure: true });
  return r.exitCode === 0;
}
