/**
 * Jobs: configuration work for one device, queued → running → complete | failed;
 * and diagnostics run on a device (ping, traceroute, dns: issue 19), recorded
 * as a job once they end, with their result.
 */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";
import { AGENT_ACTIONS } from "./device-actions.ts";

export const JobState = z.enum(["queued", "running", "complete", "failed"]);
export type JobState = z.infer<typeof JobState>;

export const JobType = z.enum([
  "modify",
  "tunnels",
  "deltunnels",
  "peers",
  "mlpolicy",
  "vrrp",
  "organization",
  "application",
  "sync",
  /** Remote actions (device-actions.ts) other than `sync`: carried out by the agent, not by an apply. */
  "restart-agent",
  "stop",
  "start",
  "reset",
  /** One device's agent upgrade in a rollout (docs/upgrades.md): carried out by the agent's upgrade receiver. */
  "upgrade",
  "ping",
  "traceroute",
  "dns",
  /** A read of the agent's log (GET /devices/{id}/logs), and a diagnostic dump (POST /devices/{id}/dump): recorded when they ended. */
  "logs",
  "dump",
]);
export type JobType = z.infer<typeof JobType>;

/**
 * Diagnostic runs: recorded as finished jobs (never queued or running in the
 * table, so the configuration job machinery never touches them); their
 * `tasks` say what ran and `result` holds the final result.
 */
export const DIAGNOSTIC_JOB_TYPES = ["ping", "traceroute", "dns"] as const satisfies readonly JobType[];
export type DiagnosticJobType = (typeof DIAGNOSTIC_JOB_TYPES)[number];

/**
 * Jobs whose work is no config apply, so the configuration job machinery (dispatch, settle by hash, requeue on
 * a lost link) never moves them: the agent's remote actions, finished by the agent's answer, and agent
 * upgrades, finished by the rollout (the agent's upgrade report, or the rollout's deadline). Diagnostics need
 * no place here: they are recorded finished.
 */
export const NON_CONFIG_JOB_TYPES = [...AGENT_ACTIONS, "upgrade"] as const satisfies readonly JobType[];

export const JobTask = z.object({ kind: z.string(), summary: z.string() });
export type JobTask = z.infer<typeof JobTask>;

export const DriverResult = z.object({
  driver: z.string(),
  ok: z.boolean(),
  changed: z.boolean(),
  durationMs: z.number().min(0),
  error: z.string().optional(),
});
export type DriverResult = z.infer<typeof DriverResult>;

export const JobError = z.object({
  /**
   * `timeout`, `device` (a driver failed; an upgrade rolled back by the agent), `superseded`, `cancelled`,
   * `device-deleted`, `transfer` (an upgrade package that could not be sent).
   */
  reason: z.string(),
  message: z.string(),
  drivers: z.array(DriverResult).default([]),
});
export type JobError = z.infer<typeof JobError>;

export const Job = z.object({
  id: Id,
  org: Id,
  type: JobType,
  state: JobState,
  /** The device the job is for (6.3.1: with name and hostname). */
  device: z.object({ id: Id, name: z.string(), hostname: z.string() }),
  tasks: z.array(JobTask),
  /**
   * Hash of the desired config that completes this job when the device reports it applied; null for the moment a
   * fan-out's job waits for its device to be recompiled (the fan-out answers before compiling).
   */
  targetHash: z.string().nullable(),
  error: JobError.nullable(),
  /** Set when a job that failed by time-out was later seen applied and corrected to complete. */
  correctedAt: Timestamp.nullable(),
  attempts: z.number().int().min(0),
  /** Diagnostic jobs: the final result (PingResult, TracerouteResult, DnsLookupResult); absent on configuration jobs. */
  result: z.unknown().optional(),
  createdBy: z.string(),
  createdAt: Timestamp,
  startedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
});
export type Job = z.infer<typeof Job>;

/** What a change that queues device work answers with (HTTP 202). */
export const JobsQueued = z.object({ jobIds: z.array(Id) });
