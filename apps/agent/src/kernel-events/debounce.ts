/**
 * Collects kernel events into batches: a batch is handed over `quietMs` after
 * its last event, but never later than `maxWaitMs` after its first. One carrier
 * loss makes the kernel announce the link, its routes and neighbours within a
 * millisecond or two; acting once on the whole burst costs a few ms of the
 * 100 ms budget and spares a state read per line.
 */
export interface BatcherOptions {
  quietMs: number;
  maxWaitMs: number;
  /** Monotonic clock in ms (tests pass their own). */
  now?: () => number;
}

export class EventBatcher<T> {
  private items: T[] = [];
  private firstAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(
    private readonly options: BatcherOptions,
    private readonly flush: (items: T[], firstAt: number) => void,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  push(item: T): void {
    if (this.items.length === 0) this.firstAt = this.now();
    this.items.push(item);
    if (this.timer) clearTimeout(this.timer);
    const waited = this.now() - this.firstAt;
    const delay = Math.max(0, Math.min(this.options.quietMs, this.options.maxWaitMs - waited));
    this.timer = setTimeout(() => this.fire(), delay);
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = null;
    const items = this.items;
    this.items = [];
    if (items.length > 0) this.flush(items, this.firstAt);
  }

  /** Drops what is pending (agent shutdown). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.items = [];
  }
}
