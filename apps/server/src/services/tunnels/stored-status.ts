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
import type { Duty } from "../../gateway/duties.ts";
import { tunnelFacts } from "./query.ts";
import { isPendingSql, overallStatusSql, tunnelStatusSql } from "./status-sql.ts";

/** The tunnels' own columns that lists filter and sort on, copied beside the status (query.ts TUNNEL_TABLE_KEYS). */
const TUNNEL_COLUMNS = [
  "num",
  "description",
  "device_a",
  "interface_a",
  "device_b",
  "interface_b",
  "peer_id",
  "pathlabel_id",
  "created_at",
] as const;
/** The stored status fields. */
const STATUS_COLUMNS = ["tunnel_status", "status", "is_pending", "a_reported", "b_reported"] as const;
/** A stored row's columns after its id and organization. */
const STORED_COLUMNS = [...TUNNEL_COLUMNS, ...STATUS_COLUMNS];

const refs = (alias: string, columns: readonly string[]) => sql.join(columns.map((c) => sql.ref(`${alias}.${c}`)));
const names = (columns: readonly string[]) => sql.join(columns.map((c) => sql.ref(c)));

/** The stored columns of the facts `f` (query.ts), the status fields derived as the list derives them. */
const derivedColumns = sql`${refs("f", TUNNEL_COLUMNS)}, ${tunnelStatusSql("f")} as tunnel_status,
  ${overallStatusSql("f")} as status, ${isPendingSql("f")} as is_pending, f.a_reported as a_reported,
  coalesce(f.b_reported, 'unknown') as b_reported`;

/**
 * The organization's marked tunnels: marked themselves (deleted ones too), or an end of a marked device. Never
 * null, so a `not in` over it stays exact.
 */
function markedTunnels(orgId: string): RawBuilder<unknown> {
  const marks = (column: string) =>
    sql`select ${sql.ref(`m.${column}`)} from tunnel_status_marks m
      where m.organization_id = ${orgId}::uuid and ${sql.ref(`m.${column}`)} is not null`;
  // Arrays for the same reason as in `ofMarked`: each marked device's tunnels looked up in the ends' indexes.
  return sql`${marks("tunnel_id")}
    union select t.id from tunnels t where t.device_a = any(array(${marks("device_id")}))
    union select t.id from tunnels t where t.device_b = any(array(${marks("device_id")}))`;
}

/**
 * The marked tunnels as a condition on alias `t`. As an array, not `in (...)`: PostgreSQL then looks the few
 * marked tunnels up by id and joins their ends' rows by index. Planned as `in (...)`, the markers' statistics
 * (a small table whose rows come and go) had it estimate 625 marked tunnels for 23 and read whole tables
 * instead: 70 ms for 10 marked devices at 20,000 tunnels.
 */
const ofMarked = (marked: RawBuilder<unknown>) => sql<SqlBool>`t.id = any(array(${marked}))`;

/**
 * The organization's tunnels as rows `f` of their list columns and status fields: stored for unmarked tunnels,
 * derived for marked ones. Shaped for PostgreSQL's planner: a UNION ALL whose stored part is a bare read of
 * one table (no WHERE of its own, no join) becomes part of the query (an "append relation") and takes the
 * conditions from outside, so PostgreSQL walks an index of `tunnel_status` in the page's order, merges the
 * marked tunnels' sorted rows in and stops at the page's limit. Any other shape (a join or a WHERE inside, an
 * OR telling the parts apart outside) was planned as a sort of every row. So the conditions hold for both
 * parts: the derived rows are the organization's, and `unmarked`, the stored rows' id, is the nil UUID for
 * them, which is no tunnel's (ids are random) and so never marked.
 */
export function storedStatusFacts(orgId: string): AliasedRawBuilder<unknown, "f"> {
  const marked = markedTunnels(orgId);
  const derived = tunnelFacts(orgId, { where: ofMarked(marked) }, { interfaces: false });
  return sql`(select * from (
      select t.id, t.organization_id, ${refs("t", STORED_COLUMNS)}, t.id as unmarked from tunnel_status t
      union all
      select f.id, ${orgId}::uuid, ${derivedColumns}, ${NIL_UUID}::uuid from ${derived}
    ) as t where t.organization_id = ${orgId}::uuid and t.unmarked not in (${marked}))`.as("f");
}

const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/**
 * Markers of an organization beyond which its marked tunnels are not derived one device or tunnel at a time
 * but with every tunnel of the organization at once (query.ts `tunnelFacts` unscoped: the jobs read once into
 * hashed sets), by the duty and by a page (which then reads every tunnel's facts, as before the stored status).
 * Measured at 10,000 devices and 20,000 tunnels on PostgreSQL: a page with 900 devices marked 22–26 ms, with
 * every tunnel's facts 72–99 ms; the duty's run 40 ms for 900 marked devices, 170 ms for every tunnel.
 */
const MARKS_SCOPED_MAX = 1_000;

/** Whether the organization has more than MARKS_SCOPED_MAX markers (counting no further). */
export async function manyMarked(db: Db, orgId: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from (select 1 from tunnel_status_marks
    where organization_id = ${orgId}::uuid limit ${MARKS_SCOPED_MAX + 1}) m`.execute(db);
  return (rows[0]?.n ?? 0) > MARKS_SCOPED_MAX;
}

/**
 * How often marked tunnels are folded: a page derives the marked ones (as every page did before), so the
 * sooner they are folded the cheaper pages are; a run that finds no marker costs one indexed read.
 */
export const TUNNEL_STATUS_DUTY_MS = 2_000;

/** Organizations folded per run; with more marked, the duty runs again shortly (gateway/duties.ts "again"). */
const FOLD_ORGS = 50;

/**
 * The duty's share of the database at most: after a run of D ms the next comes no sooner than D / FOLD_SHARE
 * after its start. A run that derives every tunnel (past MARKS_SCOPED_MAX markers: a fleet coming online, a
 * fan-out) took 0.2–0.5 s on PostgreSQL at 20,000 tunnels, and more on PGlite, whose one connection
 * everything else waits for; every 2 s that would be a quarter of PostgreSQL's time and most of PGlite's. Pages
 * read every tunnel's facts meanwhile, exact as ever, so folding more often gains nothing until the burst ends.
 */
const FOLD_SHARE = 0.1;

/** The `tunnel-status` duty (gateway/gateway.ts): `foldTunnelStatus` every `intervalMs`, spaced by FOLD_SHARE. */
export function tunnelStatusDuty(intervalMs: number, now: () => number = performance.now.bind(performance)): Duty {
  let notBefore = 0;
  return {
    name: "tunnel-status",
    intervalMs,
    async run(trx) {
      const started = now();
      if (started < notBefore) return;
      const { more } = await foldTunnelStatus(trx);
      notBefore = started + (now() - started) / FOLD_SHARE;
      return more ? "again" : undefined;
    },
  };
}

/**
 * The duty's work: for up to `FOLD_ORGS` organizations with markers, deletes the markers (those this
 * transaction sees), derives and stores their tunnels' status and deletes the status of tunnels that are gone.
 * Answers how many organizations it folded, and whether others may be left (`more`). A change committed after
 * a statement's snapshot left a marker that statement did not see: it stays, and its tunnels are derived at
 * reads until the next run.
 *
 * A connected end whose report predates its device's last connect reads `unknown` and turns known at its next
 * report without `up` flipping (no trigger fires): such tunnels are marked again, and stay marked until the
 * end reports on its new link (or its device disconnects). An end its agent no longer reports (a tunnel it
 * cannot configure since) stays marked as long as its device stays connected: derived at every read, exact.
 */
export async function foldTunnelStatus(db: Db, orgs = FOLD_ORGS): Promise<{ folded: number; more: boolean }> {
  const { rows } = await sql<{ org: string }>`select distinct organization_id as org from tunnel_status_marks
    limit ${orgs}`.execute(db);
  for (const { org } of rows) await foldOrganization(db, org);
  return { folded: rows.length, more: rows.length >= orgs };
}

async function foldOrganization(db: Db, orgId: string): Promise<void> {
  const marked = markedTunnels(orgId);
  // Many marked (a fleet reconnecting, a fan-out): every tunnel of the organization derived at once, cheaper.
  const scope = (await manyMarked(db, orgId)) ? {} : { where: ofMarked(marked) };
  const facts = tunnelFacts(orgId, scope, { interfaces: false });
  const stale = (end: "a" | "b") =>
    sql`(${sql.ref(`f.${end}_connection`)} = 'connected' and ${sql.ref(`f.${end}_at`)} is not null
      and ${sql.ref(`f.${end}_reported`)} = 'unknown')`;
  // One statement, one snapshot: the markers deleted are the ones whose tunnels it derives (a marker committed
  // after it is not seen, so not deleted); the marks inserted at its end are not deleted by it. Rows whose
  // values did not change are left alone (no dead row, no index write).
  await sql`with done as (
      delete from tunnel_status_marks where organization_id = ${orgId}::uuid returning 1
    ), d as materialized (
      select f.id, ${derivedColumns}, (${stale("a")} or ${stale("b")}) as stale from ${facts}
    ), written as (
      insert into tunnel_status (id, organization_id, ${names(STORED_COLUMNS)})
      select d.id, ${orgId}::uuid, ${refs("d", STORED_COLUMNS)} from d order by d.id
      on conflict (id) do update set (${names(STORED_COLUMNS)}) = (${refs("excluded", STORED_COLUMNS)})
      where (${refs("tunnel_status", STORED_COLUMNS)}) is distinct from (${refs("excluded", STORED_COLUMNS)})
      returning 1
    ), gone as (
      -- A deleted tunnel is marked on its own (the delete's trigger), whichever device's delete took it along.
      delete from tunnel_status s where s.organization_id = ${orgId}::uuid and s.id in (select m.tunnel_id
          from tunnel_status_marks m where m.organization_id = ${orgId}::uuid and m.tunnel_id is not null)
        and not exists (select 1 from tunnels t where t.id = s.id)
      returning 1
    )
    insert into tunnel_status_marks (organization_id, tunnel_id) select ${orgId}::uuid, d.id from d where d.stale`.execute(db);
}
