/**
 * Tunnels' status stored and indexed, exact at every read (migration 20261207-501, docs/scale.md "Tunnels
 * sorted or filtered by status"): triggers mark what a change touched (a device's tunnels, or one tunnel) in
 * `tunnel_status_marks`; the `tunnel-status` duty (`foldTunnelStatus`) derives the marked tunnels' status and
 * stores it in `tunnel_status`, deleting the markers it read in the same transaction; a page in status order
 * (`storedStatusFacts`) walks that table's index over the tunnels without a marker and derives the marked
 * ones, in one statement and so one snapshot: a marker it sees means the stored row may be stale, no marker
 * means the stored row is the status now.
 */
import { type AliasedRawBuilder, type RawBuilder, type SqlBool, sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { anyUuid } from "../desired-config.ts";
import { type TunnelScope, tunnelFacts, tunnelScopeWhere } from "./query.ts";
import { isPendingSql, overallStatusSql, tunnelStatusSql } from "./status-sql.ts";

/** The stored status fields: the columns of `tunnel_status` beside its tunnel and organization. */
const STATUS_COLUMNS = ["tunnel_status", "status", "is_pending", "a_reported", "b_reported"] as const;

/** The status fields of the facts `f` (query.ts), derived as the stored ones are. */
const derivedStatus = sql`${tunnelStatusSql("f")} as tunnel_status, ${overallStatusSql("f")} as status,
  ${isPendingSql("f")} as is_pending, f.a_reported as a_reported, coalesce(f.b_reported, 'unknown') as b_reported`;

/**
 * The organization's tunnels with a marker: marked themselves, or an end of a marked device. Never null (a
 * `not in` over it stays exact).
 */
function markedTunnels(orgId: string): RawBuilder<unknown> {
  const marks = (column: string) =>
    sql`select ${sql.ref(`m.${column}`)} from tunnel_status_marks m
      where m.organization_id = ${orgId}::uuid and ${sql.ref(`m.${column}`)} is not null`;
  return sql`select t.id from tunnels t where t.id in (${marks("tunnel_id")})
    union select t.id from tunnels t where t.device_a in (${marks("device_id")})
    union select t.id from tunnels t where t.device_b in (${marks("device_id")})`;
}

/** The columns of the tunnels table that lists filter and sort on (query.ts TUNNEL_TABLE_KEYS), from alias `t`. */
const TUNNEL_COLUMNS = sql`t.num, t.description, t.device_a, t.interface_a, t.device_b, t.interface_b, t.peer_id,
  t.pathlabel_id, t.created_at`;

/**
 * The tunnels of a scope as rows `f` of their table's columns and their status fields: stored for unmarked
 * tunnels (an index walk in status order), derived for marked ones. One UNION ALL without a WITH, so
 * PostgreSQL merges both parts in the page's order and stops at its limit.
 */
export function storedStatusFacts(orgId: string, scope: TunnelScope = {}): AliasedRawBuilder<unknown, "f"> {
  const marked = markedTunnels(orgId);
  const inScope = tunnelScopeWhere(orgId, scope);
  const derived = tunnelFacts(orgId, { ...scope, where: sql<SqlBool>`t.id in (${marked})` }, { interfaces: false });
  return sql`(
    select s.tunnel_id as id, ${TUNNEL_COLUMNS}, ${sql.join(STATUS_COLUMNS.map((c) => sql.ref(`s.${c}`)))}
    from tunnel_status s join tunnels t on t.id = s.tunnel_id
    where s.organization_id = ${orgId}::uuid and ${inScope} and s.tunnel_id not in (${marked})
    union all
    select f.id, f.num, f.description, f.device_a, f.interface_a, f.device_b, f.interface_b, f.peer_id,
      f.pathlabel_id, f.created_at, ${derivedStatus}
    from ${derived}
  )`.as("f");
}

/**
 * How often marked tunnels are folded: a page derives the marked ones (as every page did before), so the
 * sooner they are folded the cheaper pages are; a run that finds no marker costs one indexed read.
 */
export const TUNNEL_STATUS_DUTY_MS = 2_000;

/** Organizations folded per run; with more marked, the duty runs again shortly (gateway/duties.ts "again"). */
export const FOLD_ORGS = 50;

/**
 * The duty's work: for up to `FOLD_ORGS` organizations with markers, deletes the markers (those this
 * transaction sees), derives and stores their tunnels' status and deletes the status of tunnels that are gone.
 * Answers how many organizations it folded, and whether others may be left (`more`). A change committed after a statement's snapshot left a marker
 * that statement did not see: it stays, and its tunnels are derived at reads until the next run.
 *
 * A connected end whose report predates its device's last connect reads `unknown` and turns known at its next
 * report without `up` flipping (no trigger fires): such tunnels are marked again, and stay marked until the
 * end reports on its new link (or its device disconnects).
 */
export async function foldTunnelStatus(db: Db, orgs = FOLD_ORGS): Promise<{ folded: number; more: boolean }> {
  const { rows } = await sql<{ org: string }>`select distinct organization_id as org from tunnel_status_marks
    limit ${orgs}`.execute(db);
  for (const { org } of rows) await foldOrganization(db, org);
  return { folded: rows.length, more: rows.length >= orgs };
}

async function foldOrganization(db: Db, orgId: string): Promise<void> {
  const { rows: marks } = await sql<{ device_id: string | null; tunnel_id: string | null }>`
    delete from tunnel_status_marks where organization_id = ${orgId}::uuid returning device_id, tunnel_id`.execute(db);
  const devices = [...new Set(marks.flatMap((m) => (m.device_id ? [m.device_id] : [])))];
  const tunnels = [...new Set(marks.flatMap((m) => (m.tunnel_id ? [m.tunnel_id] : [])))];
  const where = sql<SqlBool>`(t.id = ${anyUuid(tunnels)} or t.device_a = ${anyUuid(devices)}
    or t.device_b = ${anyUuid(devices)})`;
  const facts = tunnelFacts(orgId, { where }, { interfaces: false });
  const stale = (end: "a" | "b") =>
    sql`(${sql.ref(`f.${end}_connection`)} = 'connected' and ${sql.ref(`f.${end}_at`)} is not null
      and ${sql.ref(`f.${end}_reported`)} = 'unknown')`;
  const columns = sql.join(STATUS_COLUMNS.map((c) => sql.ref(c)));
  const excluded = sql.join(STATUS_COLUMNS.map((c) => sql.ref(`excluded.${c}`)));
  // One statement: the status rows written and the markers kept again come from the same snapshot. Rows whose
  // status did not change are left alone (no dead row, no index write).
  await sql`with d as materialized (
      select f.id, ${derivedStatus}, (${stale("a")} or ${stale("b")}) as stale from ${facts}
    ), written as (
      insert into tunnel_status (tunnel_id, organization_id, ${columns})
      select d.id, ${orgId}::uuid, ${sql.join(STATUS_COLUMNS.map((c) => sql.ref(`d.${c}`)))} from d order by d.id
      on conflict (tunnel_id) do update set (${columns}) = (${excluded})
      where (${sql.join(STATUS_COLUMNS.map((c) => sql.ref(`tunnel_status.${c}`)))}) is distinct from (${excluded})
      returning 1
    ), gone as (
      delete from tunnel_status where tunnel_id = ${anyUuid(tunnels)} and tunnel_id not in (select id from d)
      returning 1
    )
    insert into tunnel_status_marks (organization_id, tunnel_id) select ${orgId}::uuid, d.id from d where d.stale`.execute(db);
}
