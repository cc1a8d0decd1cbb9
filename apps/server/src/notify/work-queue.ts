/**
 * The notification engine's database work, off the gateway's path: tasks run
 * in order per key (a device's raise and the resolve that follows it must not
 * swap), different keys in parallel up to `concurrency`. Nothing is ever
 * dropped (issue 14: a burst of 5,000 connecting devices lost 4,880 items to
 * the old cap). The queue stays bounded by what it holds per key instead:
 * a task pushed with a `tag` replaces a task of the same key and tag still
 * waiting at the tail of that key's queue (idempotent work such as a resolve
 * of the same condition, or "evaluate the device's latest status", whose
 * newest instance does everything the older one would have), and the engine
 * holds a device's statuses back while that device has work waiting
 * (`waiting(key)`), evaluating only the newest when its turn comes. Past
 * `warnPending` a warning is logged (rate-limited), nothing more.
 */
import type { Logger } from "pino";

interface Waiting {
  task: () => Promise<void>;
  tag: string | undefined;
}

interface KeyQueue {
  tasks: Waiting[];
  running: boolean;
}

export class WorkQueue {
  private readonly queues = new Map<string, KeyQueue>();
  /** Keys with waiting tasks and nothing running, in arrival order. */
  private readonly ready: string[] = [];
  private running = 0;
  private pending = 0;
  private idleWaiters: (() => void)[] = [];
  private lastWarnAt = 0;
  /** Tasks replaced by a newer one of the same key and tag before they ran. */
  coalesced = 0;
  /** The most tasks pending at once. */
  highWater = 0;

  constructor(
    private readonly logger: Logger,
    private readonly options: { concurrency: number; warnPending: number },
  ) {}

  get size(): number {
    return this.pending;
  }

  /** Tasks of `key` queued and not started yet. */
  waiting(key: string): number {
    return this.queues.get(key)?.tasks.length ?? 0;
  }

  /** Queues `task` behind the key's earlier tasks (or in place of the waiting tail task with the same tag). */
  push(key: string, task: () => Promise<void>, tag?: string): void {
    let q = this.queues.get(key);
    if (!q) {
      q = { tasks: [], running: false };
      this.queues.set(key, q);
    }
    const tail = q.tasks[q.tasks.length - 1];
    if (tag !== undefined && tail && tail.tag === tag) {
      tail.task = task;
      this.coalesced++;
      return;
    }
    q.tasks.push({ task, tag });
    this.pending++;
    if (this.pending > this.highWater) this.highWater = this.pending;
    if (this.pending > this.options.warnPending) {
      const now = Date.now();
      if (now - this.lastWarnAt > 10_000) {
        this.lastWarnAt = now;
        this.logger.warn(
          { pending: this.pending, coalesced: this.coalesced },
          "notification work queue long: the database is behind (nothing is dropped)",
        );
      }
    }
    if (!q.running && q.tasks.length === 1) this.ready.push(key);
    this.pump();
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
      const next = q?.tasks.shift();
      if (!q || !next) continue;
      q.running = true;
      this.running++;
      void Promise.resolve()
        .then(next.task)
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
