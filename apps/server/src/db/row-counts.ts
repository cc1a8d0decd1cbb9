/**
 * Each organization's number of devices, tunnels, jobs and notifications
 * without counting them: the sum of the deltas the tables' statement
 * triggers write to `row_counts` (migration 20261205-301), exact in any
 * snapshot. Unfiltered lists answer their total with `rowCount`; a duty folds
 * the deltas (`foldRowCounts`) so that sum stays a few rows long.
 */
import { type RawBuilder, sql } from "kysely";
import type { Db } from "./schema.ts";

export type CountedTable = "devices" | "tunnels" | "jobs" | "notifications";

/** The organization's number of rows of `table`, as a scalar sub-query (for a list's total). */
export function rowCount(orgId: string, table: CountedTable): RawBuilder<number> {
  return sql<number>`(select coalesce(sum(r.delta), 0)::int from row_counts r
    where r.organization_id = ${orgId}::uuid and r.resource = ${table})`;
}

/** Organizations whose counts one run folds at most (a short transaction; the duty runs again when more wait). */
export const FOLD_ORGS = 500;

/**
 * Replaces each organization's and table's deltas by their sum, for those with more than one row (at most
 * FOLD_ORGS organizations); returns how many organizations it folded. Rows written by transactions still open are not
 * seen, so not folded: they stay, and count once they commit. Runs in the caller's transaction (a duty's):
 * the organizations are locked first (key share), in the order an organization's deletion takes its rows
 * (the organization, then its counts), so the two never wait for each other in a cycle.
 */
export async function foldRowCounts(trx: Db, limit = FOLD_ORGS): Promise<number> {
  const orgs = (
    await sql<{ id: string }>`select o.id from organizations o where o.id in (
        select organization_id from row_counts group by organization_id, resource having count(*) > 1 limit ${limit})
      order by o.id for key share`.execute(trx)
  ).rows.map((r) => r.id);
  if (orgs.length === 0) return 0;
  await sql`with gone as (
      delete from row_counts r where r.organization_id = any(${orgs}::uuid[])
      returning r.organization_id, r.resource, r.delta
    )
    insert into row_counts (organization_id, resource, delta)
    select organization_id, resource, sum(delta) from gone group by organization_id, resource`.execute(trx);
  return orgs.length;
}
