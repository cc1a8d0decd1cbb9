/**
 * The job state transitions as SQL, each one statement that only moves jobs
 * still in the state it expects (so two instances, a late result and a
 * time-out can race without undoing each other):
 *
 *   queued ──send──▶ running ──result ok / hash reported──▶ complete
 *      ▲                │ └──result failed / time-out──▶ failed ──hash reported──▶ complete (corrected)
 *      └──link lost─────┘
 */
import { type JobError, type JobType, NON_CONFIG_JOB_TYPES } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../db/json.ts";
import type { Db } from "../db/schema.ts";

export interface FinishedJob {
  id: string;
  device_id: string;
  organization_id: string;
  type: JobType;
  created_at: Date;
}

const RETURNING = ["id", "device_id", "organization_id", "type", "created_at"] as const;

/**
 * Jobs of the agent's remote actions (restart-agent, stop, start, reset) are finished by the action's
 * answer (services/devices/actions), agent upgrades by their rollout (services/agent-upgrades), never by an
 * apply or a reported hash: the config transitions below leave them alone (and a tunnel's config state
 * reads config jobs only: services/tunnels/query.ts).
 */
export const NOT_CONFIG_JOB_TYPES = sql`${`{${NON_CONFIG_JOB_TYPES.join(",")}}`}::text[]`;

/**
 * Every queued job of each device goes out with its apply (the newest desired
 * config satisfies them all), for several devices in one statement; returns
 * the ids of the devices that had queued jobs.
 */
export async function startQueuedJobs(
  db: Db,
  applies: readonly { deviceId: string; applyId: string; hash: string }[],
): Promise<Set<string>> {
  if (applies.length === 0) return new Set();
  const { rows } = await sql<{ device_id: string }>`update jobs set state = 'running', started_at = now(),
      attempts = attempts + 1, apply_id = u.apply_id, sent_hash = u.hash
    from unnest(${applies.map((a) => a.deviceId)}::uuid[], ${applies.map((a) => a.applyId)}::text[],
      ${applies.map((a) => a.hash)}::text[]) as u(device_id, apply_id, hash)
    where jobs.device_id = u.device_id and jobs.state = 'queued' and jobs.type <> all(${NOT_CONFIG_JOB_TYPES})
      -- a fan-out's job whose device is not recompiled yet has no target: it goes out with the recompiled config
      and jobs.target_hash is not null
    returning jobs.device_id`.execute(db);
  return new Set(rows.map((r) => r.device_id));
}

/**
 * A new link's jobs, in one statement (the hello's transaction, gateway/hello-batch.ts): what is still running
 * came from an earlier link (or a dead instance) and goes out again, so for a device with an apply its running
 * and queued jobs start as that apply (as `requeueRunningMany` then `startQueuedJobs` would leave them, one
 * round trip fewer), and for a device without one (no config, a stopped data plane, waiting for the
 * recompiler) its running jobs go back to the queue. Jobs without a target (a fan-out's, not compiled yet)
 * wait. Returns the devices whose apply started jobs.
 */
export async function restartLinkJobs(
  db: Db,
  devices: readonly { deviceId: string; apply: { applyId: string; hash: string } | null }[],
): Promise<Set<string>> {
  if (devices.length === 0) return new Set();
  // `u.apply_id is not null and jobs.target_hash is not null`: the job goes out with the apply.
  const sends = sql`(u.apply_id is not null and jobs.target_hash is not null)`;
  const { rows } = await sql<{ device_id: string; state: string }>`update jobs set
      state = case when ${sends} then 'running' else 'queued' end,
      started_at = case when ${sends} then now() end,
      attempts = case when ${sends} then jobs.attempts + 1 else jobs.attempts end,
      apply_id = case when ${sends} then u.apply_id end,
      sent_hash = case when ${sends} then u.hash end
    from unnest(${devices.map((d) => d.deviceId)}::uuid[], ${devices.map((d) => d.apply?.applyId ?? null)}::text[],
      ${devices.map((d) => d.apply?.hash ?? null)}::text[]) as u(device_id, apply_id, hash)
    where jobs.device_id = u.device_id and jobs.type <> all(${NOT_CONFIG_JOB_TYPES})
      and (jobs.state = 'running' or (jobs.state = 'queued' and ${sends}))
    returning jobs.device_id, jobs.state`.execute(db);
  return new Set(rows.filter((r) => r.state === "running").map((r) => r.device_id));
}

/** A device reports `hash` applied, while its current desired config is `desiredHash`. */
export interface HashReport {
  deviceId: string;
  hash: string;
  desiredHash: string | null;
}

export interface SettledJobs {
  completed: FinishedJob[];
  corrected: FinishedJob[];
}

/**
 * The device reports `hash` applied, in one statement: queued and running
 * jobs it satisfies are complete, and jobs that failed by time-out although
 * the device did apply their config are corrected to complete (keeping their
 * error and `finished_at`, with `corrected_at` set). A job is satisfied when
 * it went out with that hash or targeted it, or by any report of the device's
 * current desired hash (the newest config contains every older change).
 */
export async function settleJobsByHash(db: Db, deviceId: string, hash: string, desiredHash: string | null): Promise<SettledJobs> {
  return (await settleJobsByHashMany(db, [{ deviceId, hash, desiredHash }])).get(deviceId) ?? emptySettledJobs();
}

const emptySettledJobs = (): SettledJobs => ({ completed: [], corrected: [] });

/** settleJobsByHash for the reports of several devices (one each) in one statement; by device id. */
export async function settleJobsByHashMany(db: Db, reports: readonly HashReport[]): Promise<Map<string, SettledJobs>> {
  const byDevice = new Map<string, SettledJobs>();
  if (reports.length === 0) return byDevice;
  const { rows } = await sql<FinishedJob & { corrected: boolean }>`update jobs set
      state = 'complete',
      finished_at = case when state = 'failed' then finished_at else now() end,
      error = case when state = 'failed' then error else null end,
      corrected_at = case when state = 'failed' then now() else corrected_at end
    from unnest(${reports.map((r) => r.deviceId)}::uuid[], ${reports.map((r) => r.hash)}::text[],
      ${reports.map((r) => r.desiredHash)}::text[]) as u(device_id, hash, desired_hash)
    where jobs.device_id = u.device_id and jobs.type <> all(${NOT_CONFIG_JOB_TYPES}) and (
      -- a job without a target (its device waits to be recompiled after a fan-out) is satisfied by nothing yet
      (jobs.state in ('queued', 'running') and jobs.target_hash is not null
        and (u.hash = u.desired_hash or jobs.sent_hash = u.hash or jobs.target_hash = u.hash))
      or (jobs.state = 'failed' and jobs.error->>'reason' = 'timeout'
        and (jobs.sent_hash = u.hash or jobs.target_hash = u.hash)))
    returning jobs.id, jobs.device_id, jobs.organization_id, jobs.type, jobs.created_at,
      -- queued and running jobs never carry corrected_at: a set one marks the row as corrected here
      jobs.corrected_at is not null as corrected`.execute(db);
  for (const { corrected, ...job } of rows) {
    const settled = byDevice.get(job.device_id) ?? emptySettledJobs();
    byDevice.set(job.device_id, settled);
    (corrected ? settled.corrected : settled.completed).push(job);
  }
  return byDevice;
}

/** The running jobs of one apply fail (a failed result, or its time-out). */
export async function failApply(db: Db, applyId: string, error: JobError): Promise<FinishedJob[]> {
  return db
    .updateTable("jobs")
    .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
    .where("apply_id", "=", applyId)
    .where("state", "=", "running")
    .returning(RETURNING)
    .execute();
}

/** The running config jobs of these applies go back to the queue (their links ended before a result). */
export async function requeueRunningApplies(db: Db, applies: readonly { deviceId: string; applyId: string }[]): Promise<void> {
  if (applies.length === 0) return;
  await sql`update jobs set state = 'queued', started_at = null, apply_id = null, sent_hash = null
    from unnest(${applies.map((a) => a.deviceId)}::uuid[], ${applies.map((a) => a.applyId)}::text[]) as u(device_id, apply_id)
    where jobs.device_id = u.device_id and jobs.apply_id = u.apply_id and jobs.state = 'running'
      and jobs.type <> all(${NOT_CONFIG_JOB_TYPES})`.execute(db);
}

/** The running config jobs of `deviceIds` go back to the queue (batched hellos: jobs left running by an earlier link). */
export async function requeueRunningMany(db: Db, deviceIds: readonly string[]): Promise<void> {
  await sql`update jobs set state = 'queued', started_at = null, apply_id = null, sent_hash = null
    where device_id = any(${deviceIds}::uuid[]) and state = 'running' and type <> all(${NOT_CONFIG_JOB_TYPES})`.execute(db);
}

/**
 * Safety net for running jobs nobody answers for (e.g. their instance died): failed with reason `timeout`.
 * Agent actions are included (their answer is due within the same time); upgrades are not: their deadline is
 * the rollout's (transfer allowance plus health time), kept by the rollout duty.
 */
export async function timeOutStaleRunning(db: Db, olderThanMs: number, error: JobError): Promise<FinishedJob[]> {
  return (
    db
      .updateTable("jobs")
      .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
      // A literal: the partial index jobs_running_started_idx (where state = 'running') serves a generic plan
      // (db/prepared-client.ts) only when the predicate is in the statement's text.
      .where("state", "=", sql.lit("running"))
      .where("type", "<>", "upgrade")
      .where("started_at", "<", sql<Date>`now() - ${`${olderThanMs} milliseconds`}::interval`)
      .returning(RETURNING)
      .execute()
  );
}

/**
 * Queued jobs that cannot go out (their devices have no desired config) fail with a reason: one statement
 * for the devices of a plan batch, the failed jobs by device.
 */
export async function failQueued(db: Db, deviceIds: readonly string[], error: JobError): Promise<Map<string, FinishedJob[]>> {
  const byDevice = new Map<string, FinishedJob[]>();
  if (deviceIds.length === 0) return byDevice;
  const rows = await db
    .updateTable("jobs")
    .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
    .where("device_id", "in", deviceIds)
    .where("state", "=", "queued")
    .where("type", "not in", NON_CONFIG_JOB_TYPES)
    .returning(RETURNING)
    .execute();
  for (const row of rows) {
    const jobs = byDevice.get(row.device_id);
    if (jobs) jobs.push(row);
    else byDevice.set(row.device_id, [row]);
  }
  return byDevice;
}

export async function countActive(db: Db, deviceId: string): Promise<{ queued: number; running: number }> {
  const rows = await db
    .selectFrom("jobs")
    .select(["state", (eb) => eb.fn.countAll<number>().as("n")])
    .where("device_id", "=", deviceId)
    .where("state", "in", ["queued", "running"])
    .groupBy("state")
    .execute();
  return {
    queued: Number(rows.find((r) => r.state === "queued")?.n ?? 0),
    running: Number(rows.find((r) => r.state === "running")?.n ?? 0),
  };
}
