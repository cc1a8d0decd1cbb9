/** What the results file records about where a run happened. */
import { execFileSync } from "node:child_process";
import os from "node:os";
import type { Machine } from "./results.ts";

function run(cmd: string, args: string[], cwd?: string): string | null {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", cwd, stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

export function machineInfo(loadAtStart: number): Machine {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpuModel: cpus[0]?.model ?? "unknown",
    cpus: cpus.length,
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] ?? 0 },
    fdLimit: run("sh", ["-c", 'echo "$(ulimit -Sn) soft / $(ulimit -Hn) hard"']),
  };
}

export function gitInfo(cwd: string): { commit: string | null; dirty: boolean | null } {
  const commit = run("git", ["rev-parse", "HEAD"], cwd);
  const status = run("git", ["status", "--porcelain", "--untracked-files=no"], cwd);
  return { commit, dirty: status === null ? null : status.length > 0 };
}
