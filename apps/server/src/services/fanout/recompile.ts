/**
 * The fan-out recompiler (issue 14). A fan-out (installing or removing a
 * multi-link policy on thousands of devices) commits the change, marks the
 * devices `desired_stale` and queues their jobs without a target, then
 * answers: compiling 10,000 configs took seconds the caller had to wait for.
 * This compiles those devices afterwards, a batch at a time, each batch in
 * its own transaction through `queueConfigJobs` (so the stored configs are
 * the same bytes the synchronous path stores): desired config and hash
 * stored, the mark cleared, the waiting jobs given their target, and their
 * dispatchers woken (`tern_jobs`) at commit.
 *
 * Nothing lives only in memory: the mark is a column. Whichever instance
 * runs first after a crash (at start, then every SWEEP_MS) takes the marked
 * devices (`skip locked`: several instances share the work, never compile a
 * device twice at once).
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { sql } from "kysely";
import { SYSTEM_ACTOR } from "../../auth/access.ts";
import type { AppDeps } from "../../deps.ts";
import { systemCtx } from "../context.ts";
import { LOCKED_CONFIG_COLUMNS, type LockedConfigRow, queueConfigJobs } from "../desired-config.ts";

/** Devices compiled per transaction: small enough that the event loop and other writers get turns between batches. */
export const RECOMPILE_BATCH = 500;
/** How often an instance looks for marked devices nobody is compiling (a crash after the answer; another instance's kick). */
export const SWEEP_MS = 2000;

type Deps = Pick<AppDeps, "db" | "config" | "keyring" | "logger">;

/**
 * Compiles marked devices until none is left (or `maxBatches` ran); returns how many it compiled. Each batch locks
 * its devices in id order, as every writer of several device rows does.
 */
export async function recompileStale(deps: Deps, maxBatches = Number.POSITIVE_INFINITY): Promise<number> {
  let done = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const n = await deps.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom("devices")
        .innerJoin("organizations as o", "o.id", "devices.organization_id")
        // What the compile reads of the devices, with the lock: queueConfigJobs takes them as `locked` instead of
        // locking and reading the same rows again (one statement of a batch fewer, on the fan-out's critical path).
        .select(LOCKED_CONFIG_COLUMNS.map((c) => `devices.${c}` as const))
        .select(["devices.organization_id", "o.account_id", "o.name as org_name"])
        // A literal: the partial index devices_desired_stale_idx serves a generic plan (db/prepared-client.ts)
        // only when the predicate is in the statement's text.
        .where("devices.desired_stale", "=", sql.lit(true))
        .orderBy("devices.id")
        .limit(RECOMPILE_BATCH)
        .forNoKeyUpdate("devices")
        .skipLocked()
        .execute();
      const byOrg = new Map<string, { org: { id: string; accountId: string; name: string }; locked: LockedConfigRow[] }>();
      for (const { organization_id, account_id, org_name, ...device } of rows) {
        const entry = byOrg.get(organization_id) ?? {
          org: { id: organization_id, accountId: account_id, name: org_name },
          locked: [],
        };
        entry.locked.push(device);
        byOrg.set(organization_id, entry);
      }
      for (const { org, locked } of byOrg.values())
        await queueConfigJobs(
          { ...systemCtx(deps as AppDeps, org, SYSTEM_ACTOR), db: trx },
          { deviceIds: locked.map((d) => d.id), type: "sync", tasks: [], queue: false, locked },
        );
      return rows.length;
    });
    done += n;
    if (n < RECOMPILE_BATCH) break;
    // Let the websockets and the API run between batches.
    await yieldToLoop();
  }
  return done;
}

/**
 * Runs `recompileStale` in the background of one instance: `kick()` after a fan-out committed (one drain at a
 * time; a kick during a drain runs another after it), plus a sweep every SWEEP_MS.
 */
export class Recompiler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly deps: Deps) {}

  start(): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), SWEEP_MS);
    this.timer.unref();
  }

  /** Compile what is marked, soon; returns the drain's promise (never rejects). */
  kick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const n = await recompileStale(this.deps);
          if (n) this.deps.logger.debug({ devices: n }, "fan-out: devices recompiled");
        } while (this.again && !this.closed);
      } catch (err) {
        this.deps.logger.error({ err }, "fan-out: recompiling devices failed (the next sweep tries again)");
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
