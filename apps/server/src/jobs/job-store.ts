/**
 * The job state transitions as SQL, each one statement that only moves jobs
 * still in the state it expects (so two instances, a late result and a
 * time-out can race without undoing each other):
 *
 *   queued ──send──▶ running ──result ok / hash reported──▶ complete
 *      ▲                │ └──result failed / time-out──▶ failed ──hash reported──▶ complete (corrected)
 *      └──link lost─────┘
 */
import type { JobError, JobType } from "@tern/protocol";
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

/** Every queued job of the device goes out with this apply (the newest desired config satisfies them all). */
export async function startQueuedJobs(db: Db, deviceId: string, applyId: string, hash: string): Promise<string[]> {
  const rows = await db
    .updateTable("jobs")
    .set({ state: "running", started_at: sql`now()`, attempts: sql`attempts + 1`, apply_id: applyId, sent_hash: hash })
    .where("device_id", "=", deviceId)
    .where("state", "=", "queued")
    .returning("id")
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The device reports `hash` applied, in one statement: queued and running
 * jobs it satisfies are complete, and jobs that failed by time-out although
 * the device did apply their config are corrected to complete (keeping their
 * error and `finished_at`, with `corrected_at` set). A job is satisfied when
 * it went out with that hash or targeted it, or by any report of the device's
 * current desired hash (the newest config contains every older change).
 */
export async function settleJobsByHash(
  db: Db,
  deviceId: string,
  hash: string,
  desiredHash: string | null,
): Promise<{ completed: FinishedJob[]; corrected: FinishedJob[] }> {
  const rows = await db
    .updateTable("jobs")
    .set({
      state: "complete",
      finished_at: sql`case when state = 'failed' then finished_at else now() end`,
      error: sql`case when state = 'failed' then error else null end`,
      corrected_at: sql`case when state = 'failed' then now() else corrected_at end`,
    })
    .where("device_id", "=", deviceId)
    .where((eb) =>
      eb.or([
        eb.and([
          eb("state", "in", ["queued", "running"]),
          hash === desiredHash ? eb.lit(true) : eb.or([eb("sent_hash", "=", hash), eb("target_hash", "=", hash)]),
        ]),
        eb.and([
          eb("state", "=", "failed"),
          sql<boolean>`error->>'reason' = 'timeout'`,
          eb.or([eb("sent_hash", "=", hash), eb("target_hash", "=", hash)]),
        ]),
      ]),
    )
    // Queued and running jobs never carry corrected_at: a set one marks the row as corrected here.
    .returning([...RETURNING, sql<boolean>`corrected_at is not null`.as("corrected")])
    .execute();
  const job = ({ corrected: _, ...j }: FinishedJob & { corrected: boolean }): FinishedJob => j;
  return { completed: rows.filter((r) => !r.corrected).map(job), corrected: rows.filter((r) => r.corrected).map(job) };
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

/** Running jobs go back to the queue (their apply's link was lost before a result): they go out on the next link. */
export async function requeueRunning(db: Db, deviceId: string, applyId?: string): Promise<number> {
  let q = db
    .updateTable("jobs")
    .set({ state: "queued", started_at: null, apply_id: null, sent_hash: null })
    .where("device_id", "=", deviceId)
    .where("state", "=", "running");
  if (applyId) q = q.where("apply_id", "=", applyId);
  const result = await q.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Safety net for running jobs nobody answers for (e.g. their instance died): failed with reason `timeout`. */
export async function timeOutStaleRunning(db: Db, olderThanMs: number): Promise<FinishedJob[]> {
  const error: JobError = {
    reason: "timeout",
    message: `no result within ${Math.round(olderThanMs / 1000)} s`,
    drivers: [],
  };
  return db
    .updateTable("jobs")
    .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
    .where("state", "=", "running")
    .where("started_at", "<", sql<Date>`now() - ${`${olderThanMs} milliseconds`}::interval`)
    .returning(RETURNING)
    .execute();
}

/** Queued jobs that cannot go out (the device has no desired config) fail with a reason. */
export async function failQueued(db: Db, deviceId: string, error: JobError): Promise<FinishedJob[]> {
  return db
    .updateTable("jobs")
    .set({ state: "failed", finished_at: sql`now()`, error: toJson(error) })
    .where("device_id", "=", deviceId)
    .where("state", "=", "queued")
    .returning(RETURNING)
    .execute();
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
