/** Router health for `status` messages (cpu, memory, disk, uptime, temperature) from systeminformation. */
import { uptime } from "node:os";
import type { Health } from "@tern/protocol";

export interface HealthSource {
  read(): Promise<Health | null>;
}

const clampPercent = (n: number) => Math.min(100, Math.max(0, Number.isFinite(n) ? Math.round(n * 10) / 10 : 0));

export class SystemHealth implements HealthSource {
  /** @param diskMount the file system whose usage is reported ("/" on a router; the state dir's in a lab). */
  constructor(private readonly diskMount = "/") {}

  async read(): Promise<Health | null> {
    // Imported on the first status, not at start (716 KB of source): `tern-agent run` reaches its hello sooner.
    const si = (await import("systeminformation")).default;
    const [load, mem, disks, temp] = await Promise.all([
      si.currentLoad(),
      si.mem(),
      si.fsSize(),
      si.cpuTemperature().catch(() => null),
    ]);
    const disk = disks.find((d) => d.mount === this.diskMount) ?? disks.find((d) => d.mount === "/") ?? disks[0];
    return {
      // os.uptime() is what si.time().uptime returns; si.time() also runs `date` with execSync and asks ICU for
      // the time zone on every status, which touched about 5 MiB more of node's ICU data (idle RSS).
      uptimeSeconds: Math.round(uptime()),
      cpuPercent: clampPercent(load.currentLoad),
      // "active" excludes caches and buffers: what applications really hold.
      memoryPercent: clampPercent(mem.total > 0 ? (mem.active / mem.total) * 100 : 0),
      diskPercent: clampPercent(disk?.use ?? 0),
      temperatureC: typeof temp?.main === "number" && temp.main > 0 ? temp.main : null,
    };
  }
}
