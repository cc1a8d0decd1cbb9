/**
 * The notification engine's database work, off the gateway's path: tasks run
 * in order per key (a device's raise and the resolve that follows it must not
 * swap), different keys in parallel up to `concurrency`, and at most
 * `maxPending` wait: beyond that a task is dropped and counted, so a slow or
 * absent database costs notifications, never memory or the stats ingestion
 * that produced them.
 */
import type { Logger } from "pino";

interface KeyQueue {
  tasks: (() => Promise<void>)[];
  running: boolean;
}

export class WorkQueue {
  private readonly queues = new Map<string, KeyQueue>();
  /** Keys with waiting tasks and nothing running, in arrival order. */
  private readonly ready: string[] = [];
  private running = 0;
  private pending = 0;
  private idleWaiters: (() => void)[] = [];
  private lastDropLogAt = 0;
  dropped = 0;

  constructor(
    private readonly logger: Logger,
    private readonly options: { concurrency: number; maxPending: number },
  ) {}

  get size(): number {
    return this.pending;
  }

  /** Queues `task` behind the key's earlier tasks; false when the queue is full and it was dropped. */
  push(key: string, task: () => Promise<void>): boolean {
    if (this.pending >= this.options.maxPending) {
      this.dropped++;
      const now = Date.now();
      if (now - this.lastDropLogAt > 10_000) {
        this.lastDropLogAt = now;
        this.logger.error({ pending: this.pending, dropped: this.dropped }, "notification work queue full: work dropped");
      }
      return false;
    }
    let q = this.queues.get(key);
    if (!q) {
      q = { tasks: [], running: false };
      this.queues.set(key, q);
    }
    q.tasks.push(task);
    this.pending++;
    if (!q.running && q.tasks.length === 1) this.ready.push(key);
    this.pump();
    return true;
  }

  /** Resolves when nothing waits or runs. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.ready.length > 0) {
      const key = this.ready.shift() as string;
      const q = this.queues.get(key);
      const task = q?.tasks.shift();
      if (!q || !task) continue;
      q.running = true;
      this.running++;
      void task()
        .catch((err) => this.logger.error({ err, key }, "notification work failed"))
        .finally(() => {
          q.running = false;
          this.running--;
          this.pending--;
          if (q.tasks.length > 0) this.ready.push(key);
          else this.queues.delete(key);
          this.pump();
          if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
        });
    }
  }
}
