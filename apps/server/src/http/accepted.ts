/**
 * Changes that queue device work answer 202 with the job ids and a Location
 * that lists those jobs (as the reference does). Routes declare
 * `202: jobsQueuedResponse` and return `acceptedWithJobs(c, ids)`.
 */
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { JobsQueuedSchema, jsonResponse } from "./schemas.ts";

export const jobsQueuedResponse = {
  ...jsonResponse(JobsQueuedSchema, "Accepted: device jobs were queued; Location lists them"),
  headers: { Location: { description: "/api/jobs?ids=… listing the queued jobs", schema: { type: "string" as const } } },
};

export function acceptedWithJobs(c: Context<AppEnv>, jobIds: string[]) {
  const location = `/api/jobs?ids=${jobIds.map(encodeURIComponent).join(",")}`;
  return c.json({ jobIds }, 202, { Location: location });
}
