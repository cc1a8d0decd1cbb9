/**
 * Each device's upgrade in a rollout is a job of type `upgrade` (docs/upgrades.md, "Jobs"), so /api/jobs, the
 * console's Jobs page, the job metrics and the "job failed" notification see it:
 *
 * - the scheduler starts it `running` in the transaction that moves the device to `sending`, in the rollout's
 *   job group (the group id is the rollout id: `GET /api/jobs?group=<rollout id>` lists its jobs);
 * - the device's end moves it: `upgraded` → complete; `rolled-back` → failed (`device`, the agent's detail),
 *   overdue → failed (`timeout`), a package that could not be sent → failed (`transfer`);
 * - a truthful report after the deadline corrects it as it corrects the device's row: committed → complete
 *   (with `corrected_at`, the time-out kept as its error, like a config job seen applied late), rolled back →
 *   its error becomes the agent's.
 *
 * A cancelled rollout's pending devices never had a job. The config job machinery never moves these jobs
 * (NON_CONFIG_JOB_TYPES in the protocol; jobs/job-store.ts), nor does the time-out duty: their deadline is the
 * rollout's.
 */
import { randomUUID } from "node:crypto";
import type { JobError, JobTask } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../db/json.ts";
import type { Db } from "../../db/schema.ts";
import { emptySettled, type Settled } from "../../jobs/finished-jobs.ts";

export const upgradeTasks = (from: string, to: string): JobTask[] => [
  { kind: "upgrade", summary: `upgrade agent ${from} → ${to}` },
];

export interface UpgradeRollout {
  id: string;
  organization_id: string;
  version: string;
  created_by: string;
}

/** Inside the scheduler's transaction: a running job for each device it just started, linked from the device's row. */
export async function startUpgradeJobs(
  trx: Db,
  rollout: UpgradeRollout,
  devices: readonly { id: string; device_id: string; from_version: string }[],
  now: Date,
): Promise<void> {
  if (devices.length === 0) return;
  const jobs = devices.map((d) => ({ rowId: d.id, jobId: randomUUID(), device: d }));
  await trx
    .insertInto("jobs")
    .values(
      jobs.map(({ jobId, device }) => ({
        id: jobId,
        organization_id: rollout.organization_id,
        device_id: device.device_id,
        type: "upgrade" as const,
        state: "running" as const,
        tasks: toJson(upgradeTasks(device.from_version, rollout.version)),
        // No config completes it: the rollout does.
        target_hash: "",
        created_by: rollout.created_by,
        started_at: now,
        attempts: 1,
        apply_id: `upgrade:${device.id}`,
        // A rollout's jobs are its job group (GET /api/jobs?group=<rollout id>).
        group_id: rollout.id,
      })),
    )
    .execute();
  await sql`update agent_rollout_devices set job_id = u.job_id
    from unnest(${jobs.map((j) => j.rowId)}::uuid[], ${jobs.map((j) => j.jobId)}::uuid[]) as u(id, job_id)
    where agent_rollout_devices.id = u.id`.execute(trx);
}

export type UpgradeOutcome = { state: "complete" } | { state: "failed"; error: JobError };

/**
 * Inside the transaction that moved the device's row: its job follows. A running job ends; a failed one (the
 * deadline passed before the agent's report) is corrected by the report. Returns what ended, for
 * reportFinishedJobs once committed (a correction to failed tells nothing new: the failure was told).
 */
export async function endUpgradeJob(trx: Db, jobId: string | null, outcome: UpgradeOutcome): Promise<Settled> {
  const settled = emptySettled();
  if (!jobId) return settled;
  const job = await trx
    .selectFrom("jobs")
    .select(["id", "device_id", "organization_id", "type", "created_at", "state"])
    .where("id", "=", jobId)
    .where("type", "=", "upgrade")
    .forUpdate()
    .executeTakeFirst();
  if (!job || (job.state !== "running" && job.state !== "failed")) return settled;
  const { state, ...finished } = job;
  const running = state === "running";
  if (outcome.state === "complete") {
    await trx
      .updateTable("jobs")
      .set(running ? { state: "complete", finished_at: sql`now()` } : { state: "complete", corrected_at: sql`now()` })
      .where("id", "=", jobId)
      .execute();
    (running ? settled.completed : settled.corrected).push(finished);
  } else {
    await trx
      .updateTable("jobs")
      .set({ state: "failed", error: toJson(outcome.error), ...(running ? { finished_at: sql`now()` } : {}) })
      .where("id", "=", jobId)
      .execute();
    if (running) settled.failed.push({ ...finished, error: outcome.error });
  }
  return settled;
}

/** Adds `more` to `into` (several devices' ends told together). */
export function mergeSettled(into: Settled, more: Settled): Settled {
  into.completed.push(...more.completed);
  into.failed.push(...more.failed);
  into.corrected.push(...more.corrected);
  return into;
}

export const upgradeError = (reason: "device" | "timeout" | "transfer", message: string): JobError => ({
  reason,
  message: message.slice(0, 1000),
  drivers: [],
});
