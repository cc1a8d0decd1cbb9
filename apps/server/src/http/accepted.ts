/**
 * Changes that queue device work answer 202 with the job ids and a Location
 * that lists those jobs (as the reference does). Routes declare
 * `202: jobsQueuedResponse` and return `acceptedWithJobs(c, ids)`. A fan-out
 * of more than MAX_LOCATION_IDS jobs gets one job group to follow instead
 * (`/api/jobs?group=<id>`): a header with every id (37 KB for 1,000 tunnels)
 * is more than HTTP clients and proxies accept.
 */
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { jobGroupOf } from "./request-ctx.ts";
import { JobsQueuedSchema, jsonResponse } from "./schemas.ts";

/** Jobs a Location lists one by one; more become a job group. */
export const MAX_LOCATION_IDS = 100;

export const jobsQueuedResponse = {
  ...jsonResponse(JobsQueuedSchema, "Accepted: device jobs were queued; Location lists them"),
  headers: {
    Location: {
      description: `/api/jobs?ids=… listing the queued jobs, or /api/jobs?group=<id> when there are more than ${MAX_LOCATION_IDS}`,
      schema: { type: "string" as const },
    },
  },
};

export function acceptedWithJobs(c: Context<AppEnv>, jobIds: string[]) {
  return c.json({ jobIds }, 202, locationOfJobs(c, jobIds));
}

/**
 * The Location of jobs a request queued: their ids, or the request's job group when there are many (its jobs were
 * queued with the group of the request's context, `requestCtx`).
 */
export function locationOfJobs(c: Context<AppEnv>, jobIds: readonly string[]): { Location: string } {
  return jobIds.length <= MAX_LOCATION_IDS ? jobsLocation(jobIds) : jobGroupLocation(jobGroupOf(c));
}

/**
 * The Location of a job group: the jobs one request queued (`jobs.group_id`, written by the INSERT that queues them
 * with the request's `ServiceCtx.jobGroup`), or an upgrade rollout's jobs.
 */
export const jobGroupLocation = (groupId: string) => ({ Location: `/api/jobs?group=${groupId}` });

/** The Location of a set of queued jobs, for changes that answer 202 only when they queued some. */
export function jobsLocation(jobIds: readonly string[]): { Location: string } {
  return { Location: `/api/jobs?ids=${jobIds.map(encodeURIComponent).join(",")}` };
}

/** The Location header declaration of a 202 response. */
export const jobsLocationHeader = jobsQueuedResponse.headers;
