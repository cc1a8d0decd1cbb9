/**
 * The end of an agent action's job, and what the server records with it:
 * `stop`/`start` set the device's `data_plane`; `start` wakes the dispatcher
 * so config jobs held while stopped go out; `reset` withdraws the approval
 * (docs/server.md, "Remote actions"). Only a job still running moves, so a
 * late answer cannot undo the time-out duty's verdict.
 */
import type { AgentAction, DeviceActionResult, JobError, JobTask } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../../db/json.ts";
import type { Db } from "../../../db/schema.ts";
import type { FinishedJob } from "../../../jobs/job-store.ts";

export interface ActionJob {
  jobId: string;
  deviceId: string;
  action: AgentAction;
  tasks: JobTask[];
}

const FINISHED = ["id", "device_id", "organization_id", "type", "created_at"] as const;

/**
 * Records the agent's answer: the job complete and the action's server-side effect, in one transaction.
 * Returns the job when this answer finished it (the caller tells its end: jobs/finished-jobs.ts), else null.
 */
export async function completeAction(db: Db, job: ActionJob, result: DeviceActionResult): Promise<FinishedJob | null> {
  return db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable("jobs")
      .set({
        state: "complete",
        finished_at: sql`now()`,
        tasks: toJson([...job.tasks, { kind: "device-answer", summary: result.message }]),
      })
      .where("id", "=", job.jobId)
      .where("state", "=", "running")
      .returning(FINISHED)
      .executeTakeFirst();
    if (!done) return null;
    if (job.action === "stop" || job.action === "start")
      await trx.updateTable("devices").set({ data_plane: result.dataPlane }).where("id", "=", job.deviceId).execute();
    if (job.action === "start") {
      // Config jobs held while stopped (job-engine) go out now; drift counts from zero again.
      await trx
        .updateTable("devices")
        .set({ sync_attempts: 0, auto_sync_paused: false })
        .where("id", "=", job.deviceId)
        .execute();
      await sql`select pg_notify('tern_jobs', ${job.deviceId})`.execute(trx);
    }
    if (job.action === "reset") await withdrawAfterReset(trx, job.deviceId);
    return done;
  });
}

/**
 * After the router tore everything down: the device is no longer approved (its link is closed by the
 * approval trigger, and nothing is sent until it is approved again, which sends its whole config), it
 * runs no config, and config jobs still waiting fail. Its stored configuration (interfaces, routes, DHCP,
 * BGP, firewall, tunnels, policies, tags) is kept for that approval; delete the device to forget it.
 */
async function withdrawAfterReset(trx: Db, deviceId: string): Promise<void> {
  await trx
    .updateTable("devices")
    .set({
      is_approved: false,
      applied_hash: null,
      data_plane: "running",
      sync_attempts: 0,
      auto_sync_paused: false,
      updated_at: sql`now()`,
    })
    .where("id", "=", deviceId)
    .execute();
  const error: JobError = { reason: "reset", message: "the device was reset before this job went out", drivers: [] };
  await trx
    .updateTable("jobs")
    .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
    .where("device_id", "=", deviceId)
    .where("state", "in", ["queued", "running"])
    // An upgrade in flight ends by its rollout (the agent's report or the deadline), like its rollout's row.
    .where("type", "<>", "upgrade")
    .execute();
}

/** The job failed (not connected, timed out, refused by the agent): nothing else changes. The job, or null if it had ended. */
export async function failAction(db: Db, job: ActionJob, error: JobError): Promise<FinishedJob | null> {
  const failed = await db
    .updateTable("jobs")
    .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
    .where("id", "=", job.jobId)
    .where("state", "=", "running")
    .returning(FINISHED)
    .executeTakeFirst();
  return failed ?? null;
}
