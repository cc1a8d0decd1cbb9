/**
 * Job groups: the jobs one request queued, under one id, so a 202 answers
 * `Location: /api/jobs?group=<id>` however many jobs there are (a header with
 * every job id outgrows what HTTP clients and proxies accept).
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Db } from "../../../db/schema.ts";

/**
 * Records the jobs as one group of the organization; null when there are none. One statement with the ids
 * as one array parameter (a text literal, as anyUuid does: the same on the pg driver and PGlite), so a
 * fan-out to 10,000 devices adds one round trip to its answer, not 30,000 bound parameters.
 */
export async function recordJobGroup(db: Db, orgId: string, jobIds: readonly string[]): Promise<string | null> {
  if (jobIds.length === 0) return null;
  const id = randomUUID();
  await sql`insert into job_groups (id, organization_id, job_id)
    select ${id}::uuid, ${orgId}::uuid, j from unnest(${`{${jobIds.join(",")}}`}::uuid[]) as j`.execute(db);
  return id;
}

/** The Location of a job group. */
export const jobGroupLocation = (groupId: string) => ({ Location: `/api/jobs?group=${groupId}` });
