/**
 * CPU and memory of a process from /proc (Linux), read from outside so the
 * same code measures a bare ws echo server, a load generator and Tern's server.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface ProcUsage {
  /** Resident set size now. */
  rssBytes: number;
  /** Peak resident set size so far (VmHWM). */
  peakRssBytes: number;
  /** User + system CPU time consumed so far. */
  cpuSeconds: number;
  /** When it was read (performance.now()). */
  at: number;
}

let clockTicks: number | null = null;

/** Kernel clock ticks per second (USER_HZ), the unit of /proc/<pid>/stat times. */
function ticksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** Reads /proc/<pid>/stat and /proc/<pid>/status; throws when the process is gone. */
export function readProcUsage(pid: number): ProcUsage {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces and parentheses: fields after the last ')' are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat, i.e. 11 and 12 after the state field (3).
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return {
    rssBytes: kb(status, "VmRSS") * 1024,
    peakRssBytes: kb(status, "VmHWM") * 1024,
    cpuSeconds: (utime + stime) / ticksPerSecond(),
    at: performance.now(),
  };
}

function kb(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (!m) throw new Error(`/proc status has no ${field}`);
  return Number(m[1]);
}

/** CPU use between two readings in percent of one core (200 % = two cores busy). */
export function cpuPercent(from: ProcUsage, to: ProcUsage): number {
  const wall = (to.at - from.at) / 1000;
  return wall > 0 ? ((to.cpuSeconds - from.cpuSeconds) / wall) * 100 : 0;
}

/** The whole machine's busy CPU time (every core, idle and iowait left out) from /proc/stat, as a ProcUsage. */
export function readMachineUsage(): ProcUsage {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already counted in user).
  const busy = (cpu[0] ?? 0) + (cpu[1] ?? 0) + (cpu[2] ?? 0) + (cpu[5] ?? 0) + (cpu[6] ?? 0) + (cpu[7] ?? 0);
  return { rssBytes: 0, peakRssBytes: 0, cpuSeconds: busy / ticksPerSecond(), at: performance.now() };
}

/**
 * Connections the kernel dropped because a listening socket's accept queue was full (TcpExt
 * ListenOverflows, the whole machine since boot); null where /proc/net/netstat cannot be read.
 */
export function listenOverflows(): number | null {
  try {
    // Two TcpExt lines: the counters' names, then their values.
    const [names, values] = readFileSync("/proc/net/netstat", "utf8")
      .split("\n")
      .filter((l) => l.startsWith("TcpExt:"))
      .map((l) => l.split(/\s+/));
    const i = names?.indexOf("ListenOverflows") ?? -1;
    return i > 0 && values ? Number(values[i]) : null;
  } catch {
    return null;
  }
}
