/**
 * A fan-out's jobs, queued before compiling (issue 14): the request commits
 * the change, its devices marked `desired_stale` and one job each without a
 * target, and answers; the recompiler (recompile.ts) compiles the devices
 * afterwards and gives the jobs their target. Committed before the answer,
 * so a server that dies after answering loses nothing: the marks and jobs
 * are rows, and any instance's recompiler finishes the work.
 */
import { randomUUID } from "node:crypto";
import type { JobTask, JobType } from "@tern/protocol";
import { sql } from "kysely";
import type { AppDeps } from "../../deps.ts";
import type { ServiceCtx } from "../context.ts";
import { insertJobs } from "../desired-config.ts";
import { recompileStale } from "./recompile.ts";

/**
 * Inside the change's transaction, after it changed the devices' settings and marked them `desired_stale`
 * (the same UPDATE, one row version): one target-less job per device. Returns the job ids in device order.
 */
export async function queueDeferredJobs(
  ctx: ServiceCtx,
  input: { deviceIds: readonly string[]; type: JobType; tasks: JobTask[] },
): Promise<string[]> {
  if (!ctx.db.isTransaction) throw new Error("queueDeferredJobs must run inside the transaction of the change");
  const jobs = input.deviceIds.map((deviceId) => ({ id: randomUUID(), deviceId, hash: null }));
  await insertJobs(ctx, input, jobs);
  return jobs.map((j) => j.id);
}

/** `set desired_stale = true` for the UPDATE that changes a fan-out's devices. */
export const markStale = { desired_stale: sql<boolean>`true` };

/**
 * After the fan-out committed: the instance's recompiler starts on it without holding up the answer; a server
 * without one (an app built for tests or tools) compiles before answering, as the synchronous path did.
 */
export async function afterFanOut(deps: Pick<AppDeps, "db" | "config" | "keyring" | "logger" | "recompiler">): Promise<void> {
  if (deps.recompiler) void deps.recompiler.kick();
  else await recompileStale(deps);
}
