/**
 * Periodic duties that must run once per interval across all instances.
 * Each instance ticks often; a tick reads which duties are due in one
 * statement (most ticks find none: an idle instance costs one statement a
 * tick, not a transaction per duty), and for each due one takes a
 * transaction-scoped advisory lock (an instance still running it makes the
 * others skip) and then claims the interval in gateway_duties (an atomic
 * "last run older than the interval" update, so two instances ticking at once
 * cannot both win). The duty runs in that transaction: if it fails, the claim
 * is undone and the next tick tries again.
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../db/schema.ts";
import type { ServerMetrics } from "../metrics/server-metrics.ts";

export interface Duty {
  name: string;
  /** The duty's own period; default: the runner's interval. */
  intervalMs?: number;
  /**
   * Runs inside the claim's transaction. Functions given to `afterCommit` run
   * once that transaction committed (e.g. deliveries of notifications the run
   * raised: a rolled-back run must not announce anything). "again": the run
   * did a bounded part of its work (a short transaction, so requests are not
   * held behind it) and this instance runs it again AGAIN_DELAY_MS later,
   * before the interval is over.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: most duties are plain async functions that return nothing when done
  run(trx: Db, afterCommit: (fn: () => void) => void): Promise<void | "again">;
}

/** A stable advisory lock key per duty name (the second argument space of two-key locks is ours). */
const LOCK_CLASS = 0x7465726e; // "tern"

/**
 * How soon after a tick whose duties left work ("again") the next one comes, instead of the regular tick (up to
 * 1 s): a duty then does its work in short slices close together, and whatever waits for the database (PGlite's
 * one connection) waits for one slice at most, not for a long run.
 */
export const AGAIN_DELAY_MS = 100;

export class DutyRunner {
  private timer: NodeJS.Timeout | null = null;
  /** The early tick after one whose duties left work. */
  private soon: NodeJS.Timeout | null = null;
  private running = false;
  /** Runs of each duty by this instance (tests and logs). */
  readonly ran = new Map<string, number>();
  /** Duties whose last run here left work for the next tick. */
  private readonly again = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly instanceId: string,
    private readonly duties: Duty[],
    private readonly intervalMs: number,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    for (const d of this.duties) {
      await this.db
        .insertInto("gateway_duties")
        .values({ name: d.name })
        .onConflict((oc) => oc.column("name").doNothing())
        .execute();
    }
    // Ticks several times per interval, so a duty runs close to its due time whichever instance claims it.
    const shortest = Math.min(this.intervalMs, ...this.duties.map((d) => d.intervalMs ?? this.intervalMs));
    const tick = Math.min(1000, Math.max(20, Math.floor(shortest / 5)));
    this.timer = setInterval(() => void this.tick(), tick);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.timer = null;
    this.soon = null;
    while (this.running) await new Promise((r) => setTimeout(r, 10));
  }

  /** One pass over every duty (also called by tests). */
  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const duty of await this.dueDuties()) await this.tryRun(duty);
    } finally {
      this.running = false;
    }
    // Only while started (tests tick by hand after stop).
    if (this.again.size > 0 && this.timer && !this.soon) {
      this.soon = setTimeout(() => {
        this.soon = null;
        void this.tick();
      }, AGAIN_DELAY_MS);
      this.soon.unref();
    }
  }

  /**
   * The duties whose interval is over by the database's clock (the one the claim uses), or that left work
   * here. A hint only: the claim decides. On an error, none (the next tick reads again).
   */
  private async dueDuties(): Promise<Duty[]> {
    try {
      const rows = await this.db
        .selectFrom("gateway_duties")
        .select([
          "name",
          // A duty never run has -infinity: counted from 1970, long enough for any interval.
          sql<number>`(extract(epoch from now() - greatest(last_run_at, 'epoch'::timestamptz)) * 1000)::float8`.as("age_ms"),
        ])
        .where(
          "name",
          "in",
          this.duties.map((d) => d.name),
        )
        .execute();
      const age = new Map(rows.map((r) => [r.name, Number(r.age_ms)]));
      return this.duties.filter((d) => this.again.has(d.name) || (age.get(d.name) ?? 0) >= (d.intervalMs ?? this.intervalMs));
    } catch (err) {
      this.logger.error({ err }, "periodic duties: reading which are due failed");
      return [];
    }
  }

  private async tryRun(duty: Duty): Promise<void> {
    try {
      const intervalMs = duty.intervalMs ?? this.intervalMs;
      const after: (() => void)[] = [];
      const due = this.again.has(duty.name) ? 0 : intervalMs;
      const ran = await this.db.transaction().execute(async (trx) => {
        const lock = await sql<{
          locked: boolean;
        }>`select pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(${duty.name})) as locked`.execute(trx);
        if (!lock.rows[0]?.locked) return false;
        const claimed = await trx
          .updateTable("gateway_duties")
          .set({ last_run_at: sql`now()`, runs: sql`runs + 1`, last_instance: this.instanceId })
          .where("name", "=", duty.name)
          .where("last_run_at", "<=", sql<Date>`now() - ${`${due} milliseconds`}::interval`)
          .returning("runs")
          .executeTakeFirst();
        if (!claimed) return false;
        return (await duty.run(trx, (fn) => after.push(fn))) ?? "done";
      });
      if (ran) {
        if (ran === "again") this.again.add(duty.name);
        else this.again.delete(duty.name);
        this.ran.set(duty.name, (this.ran.get(duty.name) ?? 0) + 1);
        this.metrics.dutyRuns.inc({ duty: duty.name });
        for (const fn of after) fn();
      }
    } catch (err) {
      this.logger.error({ err, duty: duty.name }, "periodic duty failed");
    }
  }
}
