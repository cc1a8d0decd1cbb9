/**
 * Router health for `status` messages (cpu, memory, disk, uptime, temperature), read from the kernel: /proc/stat,
 * /proc/meminfo, statfs(2) and the thermal zones in /sys.
 *
 * Why not systeminformation (which this used before): for these five figures it started about ten processes per
 * status (`cat /proc/stat | grep`, `cat /proc/mounts`, `df`, `sensors`, a hwmon shell loop, and `date` through
 * execSync, which blocks the event loop), and its 716 KB of source plus its state kept about 2 MiB of the idle
 * agent's heap; asking ICU for the time zone touched 5 MiB more of node's own binary (agent-footprint bench).
 * The figures are defined as it defined them (see each one).
 */
import { readdir, readFile, statfs } from "node:fs/promises";
import { uptime } from "node:os";
import { join } from "node:path";
import type { Health } from "@tern/protocol";

export interface HealthSource {
  read(): Promise<Health | null>;
}

const clampPercent = (n: number) => Math.min(100, Math.max(0, Number.isFinite(n) ? Math.round(n * 10) / 10 : 0));

/** Cumulative CPU ticks of all cores from /proc/stat's first line. */
interface CpuTicks {
  busy: number;
  total: number;
}

export async function readCpuTicks(procStat = "/proc/stat"): Promise<CpuTicks> {
  const line = (await readFile(procStat, "utf8")).split("\n", 1)[0] ?? "";
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** Share of memory applications hold: (MemTotal − MemAvailable) / MemTotal, systeminformation's "active". */
export function memoryPercentOf(meminfo: string): number {
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(meminfo)?.[1] ?? Number.NaN);
  const total = kb("MemTotal");
  const free = kb("MemFree");
  const available = kb("MemAvailable");
  // Kernels before 3.14 have no MemAvailable: free + buffers + cache, as systeminformation falls back.
  const avail = Number.isFinite(available) ? available : free + (kb("Buffers") || 0) + (kb("Cached") || 0);
  return total > 0 ? ((total - avail) / total) * 100 : 0;
}

/** Like df's Use%: used / (used + available to unprivileged users), in percent. */
async function diskPercent(mount: string): Promise<number> {
  const s = await statfs(mount);
  const used = (s.blocks - s.bfree) * s.bsize;
  const avail = s.bavail * s.bsize;
  return used + avail > 0 ? (used / (used + avail)) * 100 : 0;
}

/** The CPU's temperature in °C from /sys/class/thermal: a zone named for the CPU or package, else the first one. */
export async function readTemperatureC(thermalDir = "/sys/class/thermal"): Promise<number | null> {
  const zones = (await readdir(thermalDir).catch(() => [] as string[])).filter((z) => z.startsWith("thermal_zone")).sort();
  const readings: { type: string; celsius: number }[] = [];
  for (const zone of zones) {
    const [type, temp] = await Promise.all([
      readFile(join(thermalDir, zone, "type"), "utf8").catch(() => ""),
      readFile(join(thermalDir, zone, "temp"), "utf8").catch(() => ""),
    ]);
    const milli = Number.parseInt(temp, 10);
    if (Number.isFinite(milli) && milli > 0) readings.push({ type: type.trim(), celsius: milli / 1000 });
  }
  const cpu = readings.find((r) => /cpu|pkg|soc|core/i.test(r.type));
  return (cpu ?? readings[0])?.celsius ?? null;
}

export class SystemHealth implements HealthSource {
  /** CPU ticks at the previous reading: the CPU figure is the busy share since then (since boot the first time). */
  private last: CpuTicks = { busy: 0, total: 0 };

  /** @param diskMount the file system whose usage is reported ("/" on a router; the state dir's in a lab). */
  constructor(private readonly diskMount = "/") {}

  async read(): Promise<Health | null> {
    const [ticks, meminfo, disk, temperatureC] = await Promise.all([
      readCpuTicks(),
      readFile("/proc/meminfo", "utf8"),
      diskPercent(this.diskMount).catch(() => diskPercent("/")),
      readTemperatureC(),
    ]);
    const busy = ticks.busy - this.last.busy;
    const total = ticks.total - this.last.total;
    this.last = ticks;
    return {
      uptimeSeconds: Math.round(uptime()),
      cpuPercent: clampPercent(total > 0 ? (busy / total) * 100 : 0),
      memoryPercent: clampPercent(memoryPercentOf(meminfo)),
      diskPercent: clampPercent(disk),
      temperatureC,
    };
  }
}
