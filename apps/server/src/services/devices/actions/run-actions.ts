/**
 * Remote actions on devices (`POST /devices/{id}/actions`, `POST /devices/actions`),
 * each device's act tracked as a job of the action's type:
 *
 * - `sync`: the device's desired config queued again, forced (a `sync` config
 *   job even when the hash did not change); it follows the job engine's rules
 *   (waits in the queue while the device is offline or its data plane stopped).
 * - `restart-agent`, `stop`, `start`, `reset`: carried out by the agent. The job
 *   starts `running` and the server sends the `device-action` request at once,
 *   over whichever instance holds the device's link; the agent's answer
 *   completes it (finish-action.ts records the server's side). These are not
 *   queued for later: a device that is not connected fails its job at once
 *   (`not-connected`), no answer in TERN_JOB_TIMEOUT_MS fails it (`timeout`),
 *   and an agent that refuses (an older agent does not know the request) fails
 *   it with its answer (`device`). Their end is told like a config job's
 *   (metrics, `jobs-finished`: jobs/finished-jobs.ts).
 *
 * Only approved devices can be acted on: others are `skipped` (the one-device
 * route answers 409). Every request is one audit entry naming the action and
 * the devices.
 */
import { randomUUID } from "node:crypto";
import type { AgentAction, DeviceAction, JobError, JobTask } from "@tern/protocol";
import { toJson } from "../../../db/json.ts";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import { emptySettled, reportFinishedJobs } from "../../../jobs/finished-jobs.ts";
import { recordAudit } from "../../audit.ts";
import { inTransaction, type ServiceCtx } from "../../context.ts";
import { anyUuid, queueConfigJobs } from "../../desired-config.ts";
import { type ActionJob, completeAction, failAction } from "./finish-action.ts";
import { assertActionAllowed } from "./permissions.ts";

export interface RunActionInput {
  action: DeviceAction;
  confirm?: boolean | undefined;
  /** The devices, already resolved in the caller's organization. */
  deviceIds: readonly string[];
}

export interface RunActionResult {
  jobIds: string[];
  skipped: { id: string; reason: string }[];
  /** Settles when every agent action answered or failed (tests wait on it; routes do not). */
  done: Promise<void>;
}

/** The device link, and the metrics a finished job is observed in (its `jobs-finished` goes on the link's events). */
type Link = Pick<AppDeps, "deviceLink" | "metrics">;

const TASK_SUMMARY: Record<DeviceAction, string> = {
  sync: "send the desired configuration again",
  "restart-agent": "restart the agent",
  stop: "stop the data plane",
  start: "start the data plane",
  reset: "reset the router to the unconfigured state",
};

/** Checks the request (confirmation, permission), creates the jobs and starts the agent actions. */
export async function runDeviceAction(ctx: ServiceCtx, deps: Link, input: RunActionInput): Promise<RunActionResult> {
  if (input.action === "reset" && input.confirm !== true)
    throw new ApiError("CONFIRMATION_REQUIRED", "reset removes everything the agent configured: send confirm: true", [
      { path: "confirm", message: "must be true to reset" },
    ]);
  assertActionAllowed(ctx, input.action);
  const tasks: JobTask[] = [{ kind: `action-${input.action}`, summary: `${TASK_SUMMARY[input.action]} (by ${ctx.actor.label})` }];

  const { jobs, skipped, jobIds } = await inTransaction(ctx, async (tx) => {
    const approved = new Set<string>();
    for (let i = 0; i < input.deviceIds.length; i += 5000) {
      const rows = await tx.db
        .selectFrom("devices")
        .select("id")
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", anyUuid(input.deviceIds.slice(i, i + 5000)))
        .where("is_approved", "=", true)
        .execute();
      for (const r of rows) approved.add(r.id);
    }
    const targets = input.deviceIds.filter((id) => approved.has(id));
    const skipped = input.deviceIds.filter((id) => !approved.has(id)).map((id) => ({ id, reason: "the device is not approved" }));
    let jobs: ActionJob[] = [];
    let jobIds: string[] = [];
    if (input.action === "sync") {
      jobIds = (await queueConfigJobs(tx, { deviceIds: targets, type: "sync", force: true, tasks })).jobIds;
    } else {
      const action = input.action as AgentAction;
      jobs = targets.map((deviceId) => ({ jobId: randomUUID(), deviceId, action, tasks }));
      for (let i = 0; i < jobs.length; i += 500)
        await tx.db
          .insertInto("jobs")
          .values(
            jobs.slice(i, i + 500).map((j) => ({
              id: j.jobId,
              organization_id: tx.org.id,
              device_id: j.deviceId,
              type: action,
              state: "running" as const,
              tasks: toJson(tasks),
              // No config completes it (job-store leaves agent actions alone).
              target_hash: "",
              created_by: tx.actor.label,
              started_at: new Date(),
              attempts: 1,
              apply_id: `action:${j.jobId}`,
              group_id: tx.jobGroup ?? null,
            })),
          )
          .execute();
      jobIds = jobs.map((j) => j.jobId);
    }
    await recordAudit(tx, {
      action: `action-${input.action}`,
      resource: "devices",
      resourceId: input.deviceIds.length === 1 ? input.deviceIds[0]! : null,
      after: { action: input.action, devices: targets, jobs: jobIds, skipped: skipped.map((s) => s.id) },
    });
    return { jobs, skipped, jobIds };
  });

  const done = Promise.all(jobs.map((job) => carryOut(ctx, deps, job))).then(() => undefined);
  return { jobIds, skipped, done };
}

/** Sends one agent action and records its end; never throws. */
async function carryOut(ctx: ServiceCtx, deps: Link, job: ActionJob): Promise<void> {
  let error: JobError;
  try {
    const answer = await deps.deviceLink.requestFromDevice(
      job.deviceId,
      "device-action",
      { action: job.action },
      ctx.config.TERN_JOB_TIMEOUT_MS,
    );
    if (answer.ok) {
      const done = await completeAction(ctx.db, job, answer.result);
      if (done) reportFinishedJobs(deps, deps.deviceLink.events, { ...emptySettled(), completed: [done] });
      return;
    }
    error = { reason: "device", message: `the agent refused or failed the action: ${answer.error}`, drivers: [] };
  } catch (err) {
    const code = err instanceof ApiError ? err.code : "INTERNAL";
    const reason = code === "DEVICE_NOT_CONNECTED" ? "not-connected" : code === "DEVICE_TIMEOUT" ? "timeout" : "internal";
    error = { reason, message: err instanceof Error ? err.message : String(err), drivers: [] };
  }
  try {
    const failed = await failAction(ctx.db, job, error);
    if (failed) reportFinishedJobs(deps, deps.deviceLink.events, { ...emptySettled(), failed: [{ ...failed, error }] });
  } catch (err) {
    ctx.logger.error({ err, jobId: job.jobId }, "device action's end not recorded");
  }
}
