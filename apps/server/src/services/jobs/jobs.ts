/**
 * Jobs: configuration work for one device, as rows (the device gateway of
 * issue 5 dispatches them). Reads carry the device's name and hostname (6.3.1).
 *
 * Deleting a job deletes its row. A queued job is thereby cancelled: it is
 * never sent. A running one is forgotten: a result the device sends for it
 * later matches no job (the gateway still records the hash the device
 * reports). Deleting a job does not undo the change that queued it: the
 * device's desired config stays, and the gateway's drift check brings the
 * device to it with a `sync` job. To undo a change, make the opposite change.
 *
 * An agent upgrade's job (`upgrade`) that is still running cannot be deleted (409 JOB_NOT_CANCELLABLE): the
 * agent is installing, and only its rollout can stop what comes next (pause or cancel it). A finished one can.
 */
import type { Filter, Job } from "@tern/protocol";
import { rowCount } from "../../db/row-counts.ts";
import { ApiError, invalidField, notFound } from "../../http/errors.ts";
import { filterCondition, type ListSpec, runList, runListJson, type ServerListQuery } from "../../http/list-query.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { jobJson } from "./list-json.ts";

export const JOB_LIST: ListSpec = {
  fields: {
    id: { column: "j.id", type: "uuid" },
    state: { column: "j.state", type: "text" },
    type: { column: "j.type", type: "text" },
    "device.id": { column: "j.device_id", type: "uuid" },
    "device.name": { column: "d.name", type: "text" },
    "device.hostname": { column: "d.hostname", type: "text" },
    targetHash: { column: "j.target_hash", type: "text" },
    attempts: { column: "j.attempts", type: "number" },
    createdBy: { column: "j.created_by", type: "text" },
    createdAt: { column: "j.created_at", type: "timestamp" },
    startedAt: { column: "j.started_at", type: "timestamp" },
    finishedAt: { column: "j.finished_at", type: "timestamp" },
    correctedAt: { column: "j.corrected_at", type: "timestamp" },
  },
  defaultSort: { key: "createdAt", order: "desc" },
  tiebreaker: "j.id",
};

const JOB_COLUMNS = [
  "j.id",
  "j.organization_id",
  "j.type",
  "j.state",
  "j.tasks",
  "j.target_hash",
  "j.error",
  "j.corrected_at",
  "j.attempts",
  "j.created_by",
  "j.created_at",
  "j.started_at",
  "j.finished_at",
  "j.result",
  "j.device_id as device_id",
  "d.name as device_name",
  "d.hostname as device_hostname",
] as const;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toJob(row: {
  id: string;
  organization_id: string;
  type: Job["type"];
  state: Job["state"];
  tasks: Job["tasks"];
  target_hash: string | null;
  error: Job["error"];
  corrected_at: Date | null;
  attempts: number;
  created_by: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  result?: unknown;
  device_id: string;
  device_name: string;
  device_hostname: string;
}): Job {
  return {
    id: row.id,
    org: row.organization_id,
    type: row.type,
    state: row.state,
    device: { id: row.device_id, name: row.device_name, hostname: row.device_hostname },
    tasks: row.tasks,
    targetHash: row.target_hash,
    error: row.error,
    correctedAt: iso(row.corrected_at),
    attempts: row.attempts,
    ...(row.result !== null && row.result !== undefined ? { result: row.result } : {}),
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
  };
}

/** The organization's jobs (alias `j`), without their device. */
function orgJobs(ctx: ServiceCtx) {
  return ctx.db.selectFrom("jobs as j").where("j.organization_id", "=", ctx.org.id);
}

/**
 * Jobs beside their device (`d`, for its name and hostname). A left join on the device's primary key, though
 * every job has its device (not null, foreign key).
 */
const joinDevice = (jobs: ReturnType<typeof orgJobs>) => jobs.leftJoin("devices as d", "d.id", "j.device_id");

/** Jobs with their device's name and hostname, as `toJob` reads them. */
function withDevice(jobs: ReturnType<typeof orgJobs>) {
  return joinDevice(jobs).select(JOB_COLUMNS).$narrowType<{ device_name: string; device_hostname: string }>();
}

const jobsOf = (ctx: ServiceCtx) => withDevice(orgJobs(ctx));

/** JOB_LIST keys read from the device (`d`): a filter on one of them is counted with the join. */
const DEVICE_KEYS = new Set(["device.name", "device.hostname"]);

/** The organization's jobs a list reads (`ids` and `group` narrow them), and how their total is had. */
function listed(ctx: ServiceCtx, input: JobListInput) {
  let jobs = orgJobs(ctx);
  if (input.ids) jobs = jobs.where("j.id", "=", anyUuid(input.ids));
  if (input.group) jobs = jobs.where("j.group_id", "=", input.group);
  // All of the organization's jobs: their number is kept (db/row-counts.ts). Else counted from the jobs alone
  // unless a filter names the device: an index-only scan of the organization's jobs.
  const count = {
    total: input.ids || input.group ? undefined : rowCount(ctx.org.id, "jobs"),
    from: input.query.filter.some((f) => DEVICE_KEYS.has(f.key)) ? undefined : jobs,
  };
  return { jobs, count };
}

export interface JobListInput {
  query: ServerListQuery;
  ids?: readonly string[];
  group?: string;
}

/** The organization's jobs, newest first by default; `ids` narrows to those jobs (the 202 Location). */
export async function listJobs(ctx: ServiceCtx, input: JobListInput) {
  const { jobs, count } = listed(ctx, input);
  const { rows, total, next } = await runList(ctx.db, withDevice(jobs), input.query, JOB_LIST, count);
  return { items: rows.map(toJob), total, next };
}

/** The same page as the JSON text of the answer's array, built by the database (list-json.ts). */
export async function listJobsJson(
  ctx: ServiceCtx,
  input: JobListInput,
): Promise<{ json: string; total: number; next: string | null }> {
  const { jobs, count } = listed(ctx, input);
  const page = joinDevice(jobs).select(jobJson.as("json"));
  return runListJson(ctx.db, page, input.query, JOB_LIST, count);
}

export async function getJob(ctx: ServiceCtx, id: string): Promise<Job> {
  const row = await jobsOf(ctx).where("j.id", "=", id).executeTakeFirst();
  if (!row) throw notFound("job");
  return toJob(row);
}

export async function deleteJob(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await jobsOf(tx).where("j.id", "=", id).forUpdate("j").executeTakeFirst();
    if (!row) throw notFound("job");
    await refuseRunningUpgrades(tx, [row]);
    await tx.db.deleteFrom("jobs").where("id", "=", id).execute();
    await recordAudit(tx, { action: "delete", resource: "jobs", resourceId: id, before: toJob(row) });
  });
}

export interface DeleteJobsInput {
  filter: Filter[];
  ids?: readonly string[];
  /** Required to delete every job of the organization (no filter, no ids). */
  all: boolean;
}

/** Deletes every job matching the filter (and `ids`), without paging; one audit entry lists them. */
export async function deleteJobs(ctx: ServiceCtx, input: DeleteJobsInput): Promise<{ deleted: number }> {
  if (input.filter.length === 0 && !input.ids && !input.all)
    throw invalidField("filter", "give a filter or ids to choose the jobs to delete, or all=true to delete every job");
  return inTransaction(ctx, async (tx) => {
    let matching = tx.db
      .selectFrom("jobs as j")
      .innerJoin("devices as d", "d.id", "j.device_id")
      .select(["j.id", "j.state", "j.type"])
      .where("j.organization_id", "=", tx.org.id);
    if (input.ids) matching = matching.where("j.id", "=", anyUuid(input.ids));
    input.filter.forEach((f, i) => {
      matching = matching.where(filterCondition(f, JOB_LIST, i));
    });
    const rows = await matching.orderBy("j.id").forUpdate("j").execute();
    if (rows.length === 0) return { deleted: 0 };
    await refuseRunningUpgrades(tx, rows);
    const ids = rows.map((r) => r.id);
    await tx.db.deleteFrom("jobs").where("organization_id", "=", tx.org.id).where("id", "=", anyUuid(ids)).execute();
    const byState = Object.fromEntries(
      ["queued", "running", "complete", "failed"].map((s) => [s, rows.filter((r) => r.state === s).length]),
    );
    await recordAudit(tx, {
      action: "delete-many",
      resource: "jobs",
      resourceId: null,
      before: { filter: input.filter, ids, byState },
    });
    return { deleted: ids.length };
  });
}

/**
 * Refuses the whole request (nothing deleted) when it names a running agent upgrade: it is the rollout's, and
 * deleting its row would only hide an upgrade that goes on. The answer names the rollout's routes.
 */
async function refuseRunningUpgrades(
  ctx: Pick<ServiceCtx, "db">,
  rows: readonly { id: string; type: Job["type"]; state: Job["state"] }[],
): Promise<void> {
  const running = rows.filter((r) => r.type === "upgrade" && (r.state === "running" || r.state === "queued"));
  if (running.length === 0) return;
  const rollouts = await ctx.db
    .selectFrom("agent_rollout_devices")
    .select(["job_id", "rollout_id"])
    .where("job_id", "=", anyUuid(running.map((r) => r.id)))
    .execute();
  const first = rollouts[0]?.rollout_id;
  const where = first ? `POST /api/agent-upgrades/${first}/pause or /cancel` : "POST /api/agent-upgrades/{id}/pause or /cancel";
  throw new ApiError(
    "JOB_NOT_CANCELLABLE",
    `${running.length === 1 ? "a running agent upgrade job" : `${running.length} running agent upgrade jobs`} cannot be deleted: the rollout ends them (${where} stops what has not started)`,
    running.slice(0, 20).map((r) => ({
      path: "id",
      message: `job ${r.id} belongs to rollout ${rollouts.find((x) => x.job_id === r.id)?.rollout_id ?? "unknown"}`,
    })),
  );
}
