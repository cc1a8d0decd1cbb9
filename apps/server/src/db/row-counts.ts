/**
 * Each organization's number of devices, tunnels, jobs and notifications
 * without counting them: the sum of the deltas the tables' statement
 * triggers write to `row_counts` (migration 20261205-301), exact in any
 * snapshot. Unfiltered lists answer their total with `rowCount`; a duty folds
 * the deltas (`foldRowCounts`) so that sum stays a few rows long.
 *
 * The same rows, with `row_updates`, version an organization's devices
 * (`rowVersion`, migration 20261206-201): a filtered device list keeps its
 * total while the version stays (http/kept-totals.ts).
 */
import { type RawBuilder, sql } from "kysely";
import type { Db } from "./schema.ts";

export type CountedTable = "devices" | "tunnels" | "jobs" | "notifications";

/** The organization's number of rows of `table`, as a scalar sub-query (for a list's total). */
export function rowCount(orgId: string, table: CountedTable): RawBuilder<number> {
  return sql<number>`(select coalesce(sum(r.delta), 0)::int from row_counts r
    where r.organization_id = ${orgId}::uuid and r.resource = ${table})`;
}

/** Tables whose lists keep filtered totals: those with an update trigger writing `row_updates` (migration 20261206-201). */
export type VersionedTable = "devices";

/**
 * The version of the organization's rows of `table`, as a scalar expression (numeric): the statements that
 * inserted or deleted its rows, plus those that updated a column its list filters on in any organization. It
 * only grows, and a snapshot sees the same version as another only when both saw the same changes (the
 * statements of transactions still open, the reader's own included, are in neither).
 */
export function rowVersion(orgId: string, table: VersionedTable): RawBuilder<string> {
  return sql<string>`((select coalesce(sum(r.changes), 0) from row_counts r
      where r.organization_id = ${orgId}::uuid and r.resource = ${table})
    + (select coalesce(sum(u.changes), 0) from row_updates u where u.resource = ${table}))`;
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
      returning r.organization_id, r.resource, r.delta, r.changes
    )
    insert into row_counts (organization_id, resource, delta, changes)
    select organization_id, resource, sum(delta), sum(changes) from gone group by organization_id, resource`.execute(trx);
  return orgs.length;
}

/**
 * Replaces each table's `row_updates` by one row of their sum, in the caller's transaction (the same duty): the
 * version stays what it was in every snapshot. Rows of transactions still open are not seen, so not folded.
 */
export async function foldRowUpdates(trx: Db): Promise<void> {
  await sql`with gone as (
      delete from row_updates u where u.resource in (
        select resource from row_updates group by resource having count(*) > 1)
      returning u.resource, u.changes
    )
    insert into row_updates (resource, changes)
    select resource, sum(changes) from gone group by resource`.execute(trx);
}
