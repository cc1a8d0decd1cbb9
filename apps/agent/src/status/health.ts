/** Router health for `status` messages (cpu, memory, disk, uptime, temperature) from systeminformation. */
import type { Health } from "@tern/protocol";
import si from "systeminformation";

export interface HealthSource {
  read(): Promise<Health | null>;
}

const clampPercent = (n: number) => Math.min(100, Math.max(0, Number.isFinite(n) ? Math.round(n * 10) / 10 : 0));

export class SystemHealth implements HealthSource {
  /** @param diskMount the file system whose usage is reported ("/" on a router; the state dir's in a lab). */
  constructor(private readonly diskMount = "/") {}

  async read(): Promise<Health | null> {
    const [load, mem, disks, temp] = await Promise.all([
      si.currentLoad(),
      si.mem(),
      si.fsSize(),
      si.cpuTemperature().catch(() => null),
    ]);
    const disk = disks.find((d) => d.mount === this.diskMount) ?? disks.find((d) => d.mount === "/") ?? disks[0];
    return {
      uptimeSeconds: Math.round(si.time().uptime),
      cpuPercent: clampPercent(load.currentLoad),
      // "active" excludes caches and buffers: what applications really hold.
      memoryPercent: clampPercent(mem.total > 0 ? (mem.active / mem.total) * 100 : 0),
      diskPercent: clampPercent(disk?.use ?? 0),
      temperatureC: typeof temp?.main === "number" && temp.main > 0 ? temp.main : null,
    };
  }
}
