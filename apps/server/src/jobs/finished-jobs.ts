/**
 * The one way a job's end is told: the job duration metrics and the gateway's `jobs-finished` event (the
 * notification engine's "job failed", among others), one event per device. Config jobs end in the job engine
 * (job-engine.ts), agent actions in services/devices/actions, agent upgrades in services/agent-upgrades, jobs
 * nobody answered for in the gateway's time-out duty: each tells it here once its change is committed.
 */
import type { JobError } from "@tern/protocol";
import type { AppDeps } from "../deps.ts";
import type { GatewayEventMap, GatewayEvents } from "../gateway/events.ts";
import type { FinishedJob } from "./job-store.ts";

/** Jobs that ended in one step. */
export interface Settled {
  completed: FinishedJob[];
  failed: (FinishedJob & { error: JobError })[];
  /** Jobs failed by time-out that turned out done after all (complete, with `corrected_at`). */
  corrected: FinishedJob[];
}

export const emptySettled = (): Settled => ({ completed: [], failed: [], corrected: [] });

type FinishedEventJob = GatewayEventMap["jobs-finished"]["jobs"][number];

/** Observes the jobs' durations and emits `jobs-finished` for each device among them. */
export function reportFinishedJobs(deps: Pick<AppDeps, "metrics">, events: GatewayEvents, settled: Settled): void {
  const now = Date.now();
  const byDevice = new Map<string, { orgId: string; jobs: FinishedEventJob[] }>();
  const add = (j: FinishedJob, job: FinishedEventJob) => {
    const entry = byDevice.get(j.device_id) ?? { orgId: j.organization_id, jobs: [] };
    byDevice.set(j.device_id, entry);
    entry.jobs.push(job);
  };
  for (const j of settled.completed) {
    deps.metrics.jobDuration.observe({ type: j.type, result: "complete" }, (now - j.created_at.getTime()) / 1000);
    add(j, { id: j.id, type: j.type, state: "complete", error: null, corrected: false });
  }
  for (const j of settled.failed) {
    deps.metrics.jobDuration.observe({ type: j.type, result: "failed" }, (now - j.created_at.getTime()) / 1000);
    if (j.error.reason === "timeout") deps.metrics.jobsTimedOut.inc();
    add(j, { id: j.id, type: j.type, state: "failed", error: j.error, corrected: false });
  }
  for (const j of settled.corrected) {
    deps.metrics.jobsCorrected.inc();
    add(j, { id: j.id, type: j.type, state: "complete", error: null, corrected: true });
  }
  for (const [deviceId, { orgId, jobs }] of byDevice) events.emit("jobs-finished", { deviceId, orgId, jobs });
}
