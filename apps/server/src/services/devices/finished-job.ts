/**
 * Work done on a device outside the configuration job machinery — diagnostics (ping, traceroute, dns), a read
 * of the agent's log, a diagnostic dump — is recorded as a job once it ended: complete with its result, or
 * failed with the reason. Written only then, so dispatch, settle-by-hash and the time-out duty never see it;
 * `target_hash` is empty, a value no device reports, so a hash report never "corrects" it.
 */
import type { JobError, JobTask, JobType } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../db/json.ts";
import type { ServiceCtx } from "../context.ts";

export interface FinishedRun {
  id: string;
  deviceId: string;
  type: JobType;
  tasks: JobTask[];
  started: Date;
  result: unknown;
  error: JobError | null;
}

export async function recordFinishedJob(ctx: Pick<ServiceCtx, "db" | "org" | "actor">, run: FinishedRun): Promise<void> {
  await ctx.db
    .insertInto("jobs")
    .values({
      id: run.id,
      organization_id: ctx.org.id,
      device_id: run.deviceId,
      type: run.type,
      state: run.error ? "failed" : "complete",
      tasks: toJson(run.tasks),
      target_hash: "",
      error: run.error ? toJson(run.error) : null,
      result: run.result === null ? null : toJson(run.result),
      attempts: 1,
      created_by: ctx.actor.label,
      created_at: run.started,
      started_at: run.started,
      finished_at: sql<Date>`now()`,
    })
    .execute()
    // The device went away meanwhile (deleted): its jobs went with it, nothing to record.
    .catch(async (err: unknown) => {
      const gone = !(await ctx.db.selectFrom("devices").select("id").where("id", "=", run.deviceId).executeTakeFirst());
      if (!gone) throw err;
    });
}
