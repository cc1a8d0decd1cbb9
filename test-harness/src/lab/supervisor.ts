/**
 * Long-running lab processes (impairment helpers, stock peers, the server,
 * agents, relays). They are detached (own session, output to a log file) so
 * they outlive the `lab up` command, and recorded by pid + kernel start time:
 * a pid the kernel has since given to another program is never signalled.
 * Each carries TERN_LAB_INSTANCE in its environment, so `down` also finds one
 * that was started but not yet recorded when the lab process was killed.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, open, readdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";

/** Environment variable that marks every process of one lab instance. */
export const MARKER_VAR = "TERN_LAB_INSTANCE";

export interface ProcessSpec {
  /** Unique within the lab, e.g. `nfq:inet:site-b`. */
  key: string;
  /** What it is, for status output: nfq-netem, strongswan, zebra, server, agent, relay … */
  role: string;
  argv: string[];
  /** Network namespace to run in (through `ip netns exec`); root namespace when absent. */
  netns?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Log file for stdout and stderr (appended). */
  log: string;
}

export interface ProcessRecord {
  key: string;
  role: string;
  argv: string[];
  netns: string | null;
  log: string;
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot; with the pid it names one process. */
  startTime: string;
}

/** The start time of a live (non-zombie) process, or null. */
export async function procStartTime(pid: number): Promise<string | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (!stat) return null;
  // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  if (state === "Z" || state === "X") return null;
  return fields[19] ?? null;
}

/** True when the recorded process is still the one that was started. */
export async function isAlive(rec: Pick<ProcessRecord, "pid" | "startTime">): Promise<boolean> {
  return (await procStartTime(rec.pid)) === rec.startTime;
}

/** Starts a detached process; resolves once it has been exec'd (not once it is ready). */
export async function startProcess(spec: ProcessSpec, marker: string): Promise<ProcessRecord> {
  const argv = spec.netns ? ["ip", "netns", "exec", spec.netns, ...spec.argv] : spec.argv;
  await mkdir(dirname(spec.log), { recursive: true });
  const log = await open(spec.log, "a");
  try {
    const child = spawn(argv[0]!, argv.slice(1), {
      detached: true,
      stdio: ["ignore", log.fd, log.fd],
      cwd: spec.cwd,
      env: { ...process.env, LC_ALL: "C", ...spec.env, [MARKER_VAR]: marker },
    });
    // events.once rejects with the child's 'error' (ENOENT …) if that comes before 'spawn'.
    await once(child, "spawn").catch((err: Error) => {
      throw new Error(`cannot start ${argv.join(" ")}: ${err.message}`);
    });
    child.unref();
    const pid = child.pid!;
    const startTime = await procStartTime(pid);
    if (startTime === null) {
      const tail = (await readFile(spec.log, "utf8").catch(() => "")).trim().split("\n").slice(-5).join("\n");
      throw new Error(`${argv.join(" ")} exited at once (exit ${child.exitCode ?? child.signalCode}); log ${spec.log}:\n${tail}`);
    }
    return { key: spec.key, role: spec.role, argv, netns: spec.netns ?? null, log: spec.log, pid, startTime };
  } finally {
    await log.close();
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    // Detached processes lead their own process group: signal the group, so
    // their children (a relay's per-connection forks) go too.
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Stops a recorded process: SIGTERM, then SIGKILL after graceMs. Never signals a reused pid. */
export async function stopProcess(rec: Pick<ProcessRecord, "pid" | "startTime">, graceMs = 3000): Promise<void> {
  if (!(await isAlive(rec))) return;
  signal(rec.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!(await isAlive(rec))) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  if (await isAlive(rec)) signal(rec.pid, "SIGKILL");
  for (let i = 0; i < 50 && (await isAlive(rec)); i++) await new Promise((r) => setTimeout(r, 20));
}

/** Sends a signal to a recorded process if it is still the same process. */
export async function signalProcess(rec: Pick<ProcessRecord, "pid" | "startTime">, sig: NodeJS.Signals): Promise<boolean> {
  if (!(await isAlive(rec))) return false;
  process.kill(rec.pid, sig);
  return true;
}

/** Pids of live processes whose environment carries MARKER_VAR=marker. */
export async function findMarked(marker: string): Promise<{ pid: number; startTime: string }[]> {
  const needle = `\0${MARKER_VAR}=${marker}\0`;
  const found: { pid: number; startTime: string }[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const env = await readFile(`/proc/${pid}/environ`, "latin1").catch(() => null);
    if (env === null || !`\0${env}`.includes(needle)) continue;
    const startTime = await procStartTime(pid);
    if (startTime !== null) found.push({ pid, startTime });
  }
  return found;
}
