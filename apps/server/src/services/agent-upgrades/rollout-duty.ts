/**
 * The rollout scheduler: a periodic duty (gateway/duties.ts: once per interval across all instances). Each run
 * 1. fails the devices whose upgrade is overdue (sent but not reported back healthy or rolled back in time),
 *    and their jobs (`timeout`),
 * 2. pauses a running rollout with a canary that failed or rolled back (since it was created or last resumed),
 * 3. starts the next batch of a running rollout when no device of it is in flight and the window is open,
 *    or marks it complete when nothing is left; each device started gets its running `upgrade` job
 *    (upgrade-jobs.ts).
 * Sending the package happens after the duty's transaction committed, in the background of the instance that
 * ran it (transfer.ts); the device's report comes back through its status (reports.ts).
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import type { Duty } from "../../gateway/duties.ts";
import { emptySettled, reportFinishedJobs, type Settled } from "../../jobs/finished-jobs.ts";
import { inWindow } from "./plan.ts";
import { type TransferDeps, transferPackage } from "./transfer.ts";
import { endUpgradeJob, mergeSettled, startUpgradeJobs, upgradeError } from "./upgrade-jobs.ts";

/** Time for sending a package before a device in `sending` counts as failed (the health time comes on top). */
export const TRANSFER_ALLOWANCE_SEC = 300;

export interface StartedUpgrade {
  id: string;
  deviceId: string;
  rolloutId: string;
  packageId: string;
  healthTimeoutSec: number;
}

export interface ScheduledRollouts {
  /** The upgrades started (their transfer is the caller's, after commit). */
  started: StartedUpgrade[];
  /** The jobs of the devices failed as overdue (told by the caller, after commit). */
  finished: Settled;
}

const OVERDUE = "not back healthy on the new version in time";

/** One scheduler pass. */
export async function scheduleRollouts(db: Db, now: Date = new Date()): Promise<ScheduledRollouts> {
  const overdue = await db
    .updateTable("agent_rollout_devices")
    .set({ state: "failed", detail: OVERDUE, finished_at: sql`now()` })
    .where("state", "in", ["sending", "installing"])
    .where("deadline_at", "<", now)
    .returning("job_id")
    .execute();
  const finished = emptySettled();
  for (const { job_id } of overdue)
    mergeSettled(finished, await endUpgradeJob(db, job_id, { state: "failed", error: upgradeError("timeout", OVERDUE) }));
  const started: StartedUpgrade[] = [];
  const running = await db
    .selectFrom("agent_rollouts")
    .select([
      "id",
      "organization_id",
      "version",
      "created_by",
      "package_id",
      "window_start",
      "window_end",
      "health_timeout_sec",
      "updated_at",
    ])
    .where("state", "=", "running")
    .orderBy("created_at")
    .forUpdate()
    .execute();
  for (const r of running) {
    // Only canaries that failed since the rollout last changed state: a resume accepts the earlier failures.
    const failedCanary = await db
      .selectFrom("agent_rollout_devices")
      .select(["device_name", "state", "detail"])
      .where("rollout_id", "=", r.id)
      .where("canary", "=", true)
      .where("state", "in", ["failed", "rolled-back"])
      .where("finished_at", ">=", r.updated_at)
      .executeTakeFirst();
    if (failedCanary) {
      const why = `canary ${failedCanary.device_name} ${failedCanary.state}${failedCanary.detail ? `: ${failedCanary.detail}` : ""}`;
      await db
        .updateTable("agent_rollouts")
        .set({ state: "paused", paused_reason: why.slice(0, 1000), updated_at: now })
        .where("id", "=", r.id)
        .execute();
      continue;
    }
    const inFlight = await db
      .selectFrom("agent_rollout_devices")
      .select("id")
      .where("rollout_id", "=", r.id)
      .where("state", "in", ["sending", "installing"])
      .executeTakeFirst();
    if (inFlight) continue;
    const next = await db
      .selectFrom("agent_rollout_devices")
      .select(sql<number | null>`min(batch)`.as("batch"))
      .where("rollout_id", "=", r.id)
      .where("state", "=", "pending")
      .executeTakeFirst();
    if (next?.batch === null || next?.batch === undefined) {
      await db.updateTable("agent_rollouts").set({ state: "complete", updated_at: now }).where("id", "=", r.id).execute();
      continue;
    }
    const window = r.window_start && r.window_end ? { start: r.window_start, end: r.window_end } : null;
    if (!inWindow(window, now)) continue;
    const deadline = new Date(now.getTime() + (TRANSFER_ALLOWANCE_SEC + r.health_timeout_sec) * 1000);
    const rows = await db
      .updateTable("agent_rollout_devices")
      .set({ state: "sending", started_at: now, deadline_at: deadline })
      .where("rollout_id", "=", r.id)
      .where("state", "=", "pending")
      .where("batch", "=", Number(next.batch))
      .returning(["id", "device_id", "from_version"])
      .execute();
    await startUpgradeJobs(db, r, rows, now);
    for (const row of rows)
      started.push({
        id: row.id,
        deviceId: row.device_id,
        rolloutId: r.id,
        packageId: r.package_id,
        healthTimeoutSec: r.health_timeout_sec,
      });
  }
  return { started, finished };
}

/**
 * The duty the gateway runs every TERN_DUTY_INTERVAL_MS; `deps` is read at run time (the gateway replaces
 * deviceLink once it exists). The jobs it ended and the transfers it started follow its commit.
 */
export function rolloutDuty(deps: Pick<AppDeps, "deviceLink" | "logger" | "db" | "metrics">): Duty {
  return {
    name: "agent-rollouts",
    async run(trx, afterCommit) {
      const { started, finished } = await scheduleRollouts(trx);
      afterCommit(() => {
        reportFinishedJobs(deps, deps.deviceLink.events, finished);
        const transfer: TransferDeps = { db: deps.db, deviceLink: deps.deviceLink, logger: deps.logger, metrics: deps.metrics };
        for (const s of started) void transferPackage(transfer, s);
      });
    },
  };
}
