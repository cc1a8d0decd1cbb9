/**
 * Keeps `ip -o monitor link address route` running and hands each parsed event
 * over. If the monitor exits (killed, iproute2 upgraded, out of memory) it is
 * started again after a back-off (100 ms doubling to 5 s, reset after a minute
 * of running), and a `resync` event tells the listener to read the whole state,
 * as changes in the gap were not seen. Nothing here throws into the agent.
 */
import type { SpawnedProcess, Spawner } from "../runner.ts";
import { parseMonitorLine } from "./monitor-line.ts";
import type { KernelEvent } from "./types.ts";

export const MONITOR_ARGV = ["ip", "-o", "monitor", "link", "address", "route"];
const FIRST_RESTART_MS = 100;
const MAX_RESTART_MS = 5000;
const STABLE_MS = 60_000;

export interface IpMonitorOptions {
  spawner: Spawner;
  onEvent: (e: KernelEvent) => void;
  log?: { warn(msg: string, fields?: Record<string, unknown>): void };
}

export class IpMonitor {
  private proc: SpawnedProcess | null = null;
  private stopped = true;
  private restartTimer: NodeJS.Timeout | null = null;
  private backoffMs = FIRST_RESTART_MS;
  private startedAt = 0;
  /** How often the monitor was started again after it ended (metrics, tests). */
  restarts = 0;

  constructor(private readonly options: IpMonitorOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.spawn();
  }

  private spawn(): void {
    this.restartTimer = null;
    if (this.stopped) return;
    this.startedAt = performance.now();
    try {
      this.proc = this.options.spawner.spawn(
        MONITOR_ARGV,
        (line) => this.line(line),
        (code) => this.exited(code),
      );
    } catch (err) {
      this.proc = null;
      this.exited(null, err);
      return;
    }
    // Whatever changed before this monitor listened is read now.
    this.emit({ kind: "resync" });
  }

  private line(line: string): void {
    let e: KernelEvent | null = null;
    try {
      e = parseMonitorLine(line);
    } catch {
      e = null;
    }
    if (e) this.emit(e);
  }

  private emit(e: KernelEvent): void {
    try {
      this.options.onEvent(e);
    } catch (err) {
      this.options.log?.warn("kernel event handler failed", { error: (err as Error).message });
    }
  }

  private exited(code: number | null, err?: unknown): void {
    this.proc = null;
    if (this.stopped) return;
    if (performance.now() - this.startedAt > STABLE_MS) this.backoffMs = FIRST_RESTART_MS;
    this.options.log?.warn("ip monitor ended; starting it again", {
      exitCode: code,
      ...(err ? { error: (err as Error).message } : {}),
      inMs: this.backoffMs,
    });
    this.restarts++;
    this.restartTimer = setTimeout(() => this.spawn(), this.backoffMs);
    this.restartTimer.unref?.();
    this.backoffMs = Math.min(MAX_RESTART_MS, this.backoffMs * 2);
  }

  stop(): void {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.proc?.stop();
    this.proc = null;
  }
}
