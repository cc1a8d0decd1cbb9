/**
 * Job groups: the jobs one request queued, under one id, so a 202 answers
 * `Location: /api/jobs?group=<id>` however many jobs there are (a header with
 * every job id outgrows what HTTP clients and proxies accept).
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../../db/schema.ts";

const CHUNK = 5000;

/** Records the jobs as one group of the organization; null when there are none. */
export async function recordJobGroup(db: Db, orgId: string, jobIds: readonly string[]): Promise<string | null> {
  if (jobIds.length === 0) return null;
  const id = randomUUID();
  for (let start = 0; start < jobIds.length; start += CHUNK)
    await db
      .insertInto("job_groups")
      .values(jobIds.slice(start, start + CHUNK).map((jobId) => ({ id, organization_id: orgId, job_id: jobId })))
      .execute();
  return id;
}

/** The Location of a job group. */
export const jobGroupLocation = (groupId: string) => ({ Location: `/api/jobs?group=${groupId}` });
