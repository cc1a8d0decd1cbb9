/**
 * Whether this process's event loop has been running freely. A busy loop (a
 * long synchronous stretch, a GC pause, a starved CPU) delays this
 * instance's own heartbeat and its view of everyone else's: what it reads
 * right after a stall says more about itself than about the others. So the
 * stale-link duty judges other instances only after the loop has run without
 * a stall for a whole stale period (they had that long to beat while this
 * instance watched), and never judges itself (sessions.ts: its own row is
 * refreshed by the duty).
 */
export class LoopHealth {
  private lastTick = performance.now();
  private stalledAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  /** The longest stall seen (ms). */
  longestStallMs = 0;

  constructor(
    private readonly tickMs: number,
    private readonly stallMs: number,
    private readonly onStall: (ms: number) => void = () => {},
  ) {}

  start(): void {
    this.lastTick = performance.now();
    this.timer = setInterval(() => this.check(), this.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** True when the loop ran without a stall for the last `ms` (a stall still under way counts: it is checked now). */
  healthyFor(ms: number): boolean {
    this.check();
    return performance.now() - this.stalledAt >= ms;
  }

  private check(): void {
    const now = performance.now();
    const late = now - this.lastTick - this.tickMs;
    this.lastTick = now;
    if (late <= this.stallMs) return;
    this.stalledAt = now;
    this.longestStallMs = Math.max(this.longestStallMs, late);
    this.onStall(late);
  }
}
