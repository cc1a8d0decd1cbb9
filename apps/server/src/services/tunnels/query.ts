/**
 * Reading tunnels: one SQL query joins each tunnel with the facts its status
 * is derived from (both ends' connection, config-job state, whether the
 * compiler put the tunnel in each end's desired config, live reports), so
 * lists filter and sort on the derived status in the database.
 */
import {
  parseCidr,
  type Tunnel,
  type TunnelQuality,
  type TunnelSummary,
  type TunnelThresholds,
  tunnelLoopbacks,
} from "@tern/protocol";
import { type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from "kysely";
import { rowCount } from "../../db/row-counts.ts";
import type { Db } from "../../db/schema.ts";
import { notFound } from "../../http/errors.ts";
import { type ListSpec, runList, runListJson, type ServerListQuery } from "../../http/list-query.ts";
import { NOT_CONFIG_JOB_TYPES } from "../../jobs/job-store.ts";
import type { ServiceCtx } from "../context.ts";
import { anyUuid, toPgArray } from "../desired-config.ts";
import { tunnelJson, tunnelRangeTable, tunnelSummaryJson } from "./list-json.ts";
import { deriveTunnelStatus, type EndConfigState, type EndConnection, type EndReport } from "./status.ts";
import { isPendingSql, overallStatusSql, tunnelStatusSql } from "./status-sql.ts";
import { manyMarked, storedStatusFacts } from "./stored-status.ts";

/** One row of the facts query (alias `f`). `b_*` are null for peer tunnels, `peer_*` for device tunnels. */
export interface TunnelFactsRow {
  id: string;
  num: number;
  description: string;
  device_a: string;
  interface_a: string;
  device_b: string | null;
  interface_b: string | null;
  peer_id: string | null;
  pathlabel_id: string | null;
  notifications: TunnelThresholds;
  created_at: Date;
  pending_since: Date | null;
  a_name: string;
  a_hostname: string;
  /** The tunnel's interface on end A, read from the device's interfaces (null: no longer there). */
  a_iface_name: string | null;
  a_iface_ipv4: string | null;
  a_connection: EndConnection;
  a_configured: boolean;
  a_config: EndConfigState;
  a_reported: EndReport;
  b_name: string | null;
  b_hostname: string | null;
  b_iface_name: string | null;
  b_iface_ipv4: string | null;
  b_connection: EndConnection | null;
  b_configured: boolean | null;
  b_config: EndConfigState | null;
  b_reported: EndReport | null;
  /** The latest figures each end reported (tunnel_latest), whatever their age; null before the first. */
  a_at: Date | null;
  a_up: boolean | null;
  a_loss: number | null;
  a_rtt: number | null;
  a_jitter: number | null;
  a_samples: number | null;
  a_window_ms: number | null;
  b_at: Date | null;
  b_up: boolean | null;
  b_loss: number | null;
  b_rtt: number | null;
  b_jitter: number | null;
  b_samples: number | null;
  b_window_ms: number | null;
  peer_name: string | null;
  peer_remote_ip: string | null;
}

export interface TunnelScope {
  /** Only these tunnels. */
  ids?: readonly string[];
  /** Only tunnels this device is an end of. */
  deviceId?: string;
  /** Only tunnels meeting this condition on alias `t` (stored-status.ts: the marked ones). */
  where?: RawBuilder<SqlBool>;
}

/** A read of some of the organization's tunnels (a page, one device's), not all of them. */
const isScoped = (scope: TunnelScope): boolean =>
  scope.ids !== undefined || scope.deviceId !== undefined || scope.where !== undefined;

/**
 * The facts query as a derived table `f`. The `dev` CTE computes each
 * device's facts once (its desired config's tunnel ids, its job state), not
 * once per tunnel; each end's interface comes from `interfaceLookups` or `interfaceJoins` (below), or is
 * null with `interfaces: false` (a read that filters and sorts without them, then reads its page's facts).
 * An end's report (`*_reported`) is its latest figures in `tunnel_latest`
 * when they were taken on the device's current link (a report from before the
 * last connect says nothing about now): `up` or `down`; otherwise, and while
 * the device is not connected, `unknown`.
 */
export function tunnelFacts(orgId: string, scope: TunnelScope = {}, { interfaces = true }: { interfaces?: boolean } = {}) {
  const where = tunnelScopeWhere(orgId, scope);
  const scoped = isScoped(scope);
  // A scoped read needs the devices at its tunnels' ends only. Every tunnel of the organization needs (nearly) all
  // of its devices, and naming them by the ends' union cost more than it saved: at 20,000 tunnels the union's hash
  // took 23 of 180 ms, and its estimate (4× the devices) made PostgreSQL sort the ends' facts to disk for merge
  // joins. Without it they are hash-joined (EXPLAIN ANALYZE, a page sorted by status).
  const ends = scoped
    ? sql`and d.id in (select device_a from scoped union select device_b from scoped where device_b is not null)`
    : sql``;
  return sql<TunnelFactsRow>`(
    with scoped as (select * from tunnels t where ${where}),
    dev as materialized (
      select d.id, d.name, d.hostname, ${scoped && interfaces ? sql`d.interfaces,` : sql``} d.connection, d.last_connected_at,
        d.desired_tunnel_ids as configured_ids,
        ${configState(orgId, scoped)} as config_state
      from devices d
      where d.organization_id = ${orgId}::uuid ${ends}
    )${scoped || !interfaces ? sql`` : sql`, ifc as materialized (${orgInterfaces(orgId)})`}
    select t.id, t.num, t.description, t.device_a, t.interface_a, t.device_b, t.interface_b, t.peer_id,
      t.pathlabel_id, t.notifications, t.created_at, t.pending_since,
      a.name as a_name, a.hostname as a_hostname, ${interfaceColumns("a", interfaces)}, a.connection as a_connection,
      (t.id = any(a.configured_ids)) as a_configured, a.config_state as a_config, ${reported("a", "la")} as a_reported,
      b.name as b_name, b.hostname as b_hostname, ${interfaceColumns("b", interfaces)}, b.connection as b_connection,
      case when b.id is null then null else (t.id = any(b.configured_ids)) end as b_configured,
      b.config_state as b_config, case when b.id is null then null else ${reported("b", "lb")} end as b_reported,
      la.at as a_at, la.up as a_up, la.loss as a_loss, la.rtt as a_rtt, la.jitter as a_jitter,
      la.samples as a_samples, la.window_ms as a_window_ms,
      lb.at as b_at, lb.up as b_up, lb.loss as b_loss, lb.rtt as b_rtt, lb.jitter as b_jitter,
      lb.samples as b_samples, lb.window_ms as b_window_ms,
      p.name as peer_name, p.config ->> 'remoteIP' as peer_remote_ip
    from scoped t
    join dev a on a.id = t.device_a
    left join dev b on b.id = t.device_b
    left join peers p on p.id = t.peer_id
    ${interfaces ? (scoped ? interfaceLookups : interfaceJoins) : sql``}
    left join tunnel_latest la on la.tunnel_id = t.id and la.side = 'a'
    left join tunnel_latest lb on lb.tunnel_id = t.id and lb.side = 'b' and b.id is not null
  )`.as("f");
}

/** Jobs `j` that are config jobs queued or running. */
const IN_FLIGHT_JOBS = sql`j.state in ('queued', 'running') and j.type <> all(${NOT_CONFIG_JOB_TYPES})`;
/** Jobs `j` that are failed config jobs with no complete job of their device after them. */
const FAILED_LAST_JOBS = sql`j.state = 'failed' and j.type <> all(${NOT_CONFIG_JOB_TYPES}) and not exists (
    select 1 from jobs c where c.device_id = j.device_id and c.state = 'complete' and c.created_at > j.created_at)`;

/**
 * A device's config-job state (`d`): `in-flight` while a config job is queued or running, `failed` when its newest
 * config job failed (no complete one after it), else `applied`. Two forms of the same answer:
 *
 * A scoped read (a page, a duty's slice, one device's tunnels) has a few devices: each asks the jobs' (device,
 * state) index. Left to itself the planner hashed the organization's queued and running jobs instead, a scan of
 * all of them at every page (7 ms of a 15 ms slice of 100 tunnels on PGlite with 10,000 jobs queued). OFFSET 0
 * keeps PostgreSQL from turning the EXISTS into that hashed subplan.
 *
 * Every tunnel of the organization needs every device's state: the queued and running jobs, and the failed ones
 * with no complete job after them, are each read once into a hashed set. Asked per device, the failed jobs' probe
 * alone cost 10,000 index scans (at 20,000 tunnels, a page sorted by status on PGlite: 77 ms with it, 65 without).
 */
function configState(orgId: string, scoped: boolean): RawBuilder<string> {
  const has = (jobs: RawBuilder<unknown>, probe: RawBuilder<unknown> = sql``) =>
    scoped
      ? sql`exists (select 1 from jobs j where j.device_id = d.id and ${jobs} ${probe})`
      : sql`d.id in (select j.device_id from jobs j where j.organization_id = ${orgId}::uuid and ${jobs})`;
  return sql<string>`case when ${has(IN_FLIGHT_JOBS, sql`offset 0`)} then 'in-flight'
    when ${has(FAILED_LAST_JOBS)} then 'failed' else 'applied' end`;
}

/** The tunnels of `scope` in the organization, as a condition on alias `t`. */
function tunnelScopeWhere(orgId: string, scope: TunnelScope): RawBuilder<SqlBool> {
  const tunnelWhere = [sql`t.organization_id = ${orgId}::uuid`];
  if (scope.ids) tunnelWhere.push(sql`t.id = ${anyUuid(scope.ids)}`);
  if (scope.deviceId) tunnelWhere.push(sql`(t.device_a = ${scope.deviceId}::uuid or t.device_b = ${scope.deviceId}::uuid)`);
  if (scope.where) tunnelWhere.push(scope.where);
  return sql<SqlBool>`(${sql.join(tunnelWhere, sql` and `)})`;
}

/** An end's live report: its latest figures, when taken on the device's current link. */
function reported(end: "a" | "b", latest: string): RawBuilder<EndReport> {
  const l = (c: string) => sql.ref(`${latest}.${c}`);
  const d = (c: string) => sql.ref(`${end}.${c}`);
  return sql<EndReport>`(case when ${l("at")} is null or ${d("connection")} <> 'connected'
      or ${l("at")} < ${d("last_connected_at")} then 'unknown'
    when ${l("up")} then 'up' else 'down' end)`;
}

/**
 * The name and address of the tunnel's interface on each end (`ia`, `ib`; the first of the device's interfaces
 * with that id, in the array's order; none when it is gone). Only these two fields leave the database: each end's
 * whole interfaces jsonb, read and parsed per row to find them, was most of a tunnel list's server time.
 *
 * A scoped read (a page: a few devices) looks each end's interface up in its device's row, carried in `dev`.
 * Every tunnel of the organization takes all its devices' interfaces apart once (`ifc`) and hash-joins them:
 * carried through the joins instead, the interfaces jsonb (about 1 KB a device) made those reads spill to
 * temporary files (40 MB a request at 20,000 tunnels, written and read again by each of 50 concurrent requests:
 * one request a second), and an `ifc` for a page cost it 0.2 ms more than the look-ups.
 */
const lookup = (end: "a" | "b", id: string): RawBuilder<unknown> =>
  sql`(select i ->> 'name' as name, i ->> 'IPv4' as ipv4 from jsonb_array_elements(${sql.ref(`${end}.interfaces`)}) i
    where i ->> 'id' = ${sql.ref(id)}::text limit 1)`;
const interfaceColumns = (end: "a" | "b", read: boolean): RawBuilder<unknown> =>
  read
    ? sql`${sql.ref(`i${end}.name`)} as ${sql.ref(`${end}_iface_name`)}, ${sql.ref(`i${end}.ipv4`)} as ${sql.ref(`${end}_iface_ipv4`)}`
    : sql`null::text as ${sql.ref(`${end}_iface_name`)}, null::text as ${sql.ref(`${end}_iface_ipv4`)}`;
const interfaceLookups = sql`left join lateral ${lookup("a", "t.interface_a")} as ia on true
    left join lateral ${lookup("b", "t.interface_b")} as ib on true`;
const orgInterfaces = (orgId: string): RawBuilder<unknown> =>
  sql`select distinct on (d.id, i.v ->> 'id') d.id as device_id, i.v ->> 'id' as iid, i.v ->> 'name' as name,
      i.v ->> 'IPv4' as ipv4
    from devices d cross join jsonb_array_elements(d.interfaces) with ordinality as i(v, k)
    where d.organization_id = ${orgId}::uuid
    order by d.id, i.v ->> 'id', i.k`;
const interfaceJoins = sql`left join ifc ia on ia.device_id = t.device_a and ia.iid = t.interface_a::text
    left join ifc ib on ib.device_id = t.device_b and ib.iid = t.interface_b::text`;

export const TUNNEL_LIST: ListSpec = {
  fields: {
    id: { column: "f.id", type: "uuid" },
    num: { column: "f.num", type: "number" },
    description: { column: "f.description", type: "text" },
    "device.id": { column: ["f.device_a", "f.device_b"], type: "uuid" },
    "device.name": { column: ["f.a_name", "f.b_name"], type: "text" },
    "device.hostname": { column: ["f.a_hostname", "f.b_hostname"], type: "text" },
    "deviceA.id": { column: "f.device_a", type: "uuid" },
    "deviceA.name": { column: "f.a_name", type: "text" },
    "deviceA.hostname": { column: "f.a_hostname", type: "text" },
    "deviceB.id": { column: "f.device_b", type: "uuid" },
    "deviceB.name": { column: "f.b_name", type: "text" },
    "deviceB.hostname": { column: "f.b_hostname", type: "text" },
    "interfaceA.id": { column: "f.interface_a", type: "uuid" },
    "interfaceB.id": { column: "f.interface_b", type: "uuid" },
    "interfaceA.name": { column: "f.a_iface_name", type: "text" },
    "interfaceB.name": { column: "f.b_iface_name", type: "text" },
    "peer.id": { column: "f.peer_id", type: "uuid" },
    "peer.name": { column: "f.peer_name", type: "text" },
    "peer.remoteIP": { column: "f.peer_remote_ip", type: "text" },
    pathlabel: { column: "f.pathlabel_id", type: "uuid" },
    tunnelStatus: { column: tunnelStatusSql("f"), type: "text" },
    status: { column: overallStatusSql("f"), type: "text" },
    isPending: { column: isPendingSql("f"), type: "boolean" },
    tunnelStatusA: { column: "f.a_reported", type: "text" },
    tunnelStatusB: { column: sql`coalesce(f.b_reported, 'unknown')`, type: "text" },
    createdAt: { column: "f.created_at", type: "timestamp" },
  },
  defaultSort: { key: "num", order: "asc" },
  tiebreaker: "f.id",
};

/** The status keys of TUNNEL_LIST as columns of the stored status (stored-status.ts `storedStatusFacts`). */
const STORED_STATUS_FIELDS: ListSpec["fields"] = {
  tunnelStatus: { column: "f.tunnel_status", type: "text" },
  status: { column: "f.status", type: "text" },
  isPending: { column: "f.is_pending", type: "boolean" },
  tunnelStatusA: { column: "f.a_reported", type: "text" },
  tunnelStatusB: { column: "f.b_reported", type: "text" },
};

/** TUNNEL_LIST over `storedStatusFacts`: the same keys, the same values, its status keys as plain columns. */
const TUNNEL_STORED_LIST: ListSpec = { ...TUNNEL_LIST, fields: { ...TUNNEL_LIST.fields, ...STORED_STATUS_FIELDS } };

/** The keys of TUNNEL_LIST, for route descriptions. */
export const TUNNEL_LIST_KEYS = Object.keys(TUNNEL_LIST.fields).join(", ");

function interfaceRef(id: string, name: string | null, IPv4: string | null) {
  // An interface removed from its device since: the tunnel stays visible (and deletable) with an empty name.
  return { id, name: name ?? "", IPv4: IPv4 ?? "" };
}

function statusOf(row: TunnelFactsRow) {
  return deriveTunnelStatus({
    a: {
      deviceName: row.a_name,
      connection: row.a_connection,
      configured: row.a_configured,
      config: row.a_config,
      reported: row.a_reported,
    },
    b:
      row.device_b === null
        ? null
        : {
            deviceName: row.b_name ?? "",
            connection: row.b_connection ?? "never",
            configured: row.b_configured ?? false,
            config: row.b_config ?? "applied",
            reported: row.b_reported ?? "unknown",
          },
  });
}

export function toTunnel(row: TunnelFactsRow, orgId: string, tunnelRange: string): Tunnel {
  const range = parseCidr(tunnelRange);
  const [loopbackA, loopbackB] = (range && tunnelLoopbacks(range, row.num)) ?? ["", ""];
  return {
    id: row.id,
    org: orgId,
    num: row.num,
    description: row.description,
    deviceA: { id: row.device_a, name: row.a_name, hostname: row.a_hostname },
    interfaceA: interfaceRef(row.interface_a, row.a_iface_name, row.a_iface_ipv4),
    deviceB: row.device_b ? { id: row.device_b, name: row.b_name ?? "", hostname: row.b_hostname ?? "" } : null,
    interfaceB: row.interface_b ? interfaceRef(row.interface_b, row.b_iface_name, row.b_iface_ipv4) : null,
    peer: row.peer_id ? { id: row.peer_id, name: row.peer_name ?? "", remoteIP: row.peer_remote_ip ?? "" } : null,
    pathlabel: row.pathlabel_id,
    loopbackA,
    loopbackB,
    ...statusOf(row),
    notifications: row.notifications,
    quality: { a: quality(row, "a"), b: quality(row, "b") },
    createdAt: row.created_at.toISOString(),
  };
}

/** Three decimals: samples are stored as `real`, whose binary noise (0.10000000149) means nothing here. */
const round = (n: number) => Math.round(n * 1000) / 1000;

function quality(row: TunnelFactsRow, end: "a" | "b"): TunnelQuality | null {
  const at = row[`${end}_at`];
  if (!at) return null;
  return {
    loss: round(row[`${end}_loss`] ?? 0),
    rtt: round(row[`${end}_rtt`] ?? 0),
    jitter: round(row[`${end}_jitter`] ?? 0),
    up: row[`${end}_up`] ?? false,
    at: at.toISOString(),
    samples: row[`${end}_samples`] ?? 0,
    windowMs: row[`${end}_window_ms`] ?? null,
  };
}

export function toTunnelSummary(t: Tunnel): TunnelSummary {
  const { id, num, deviceA, deviceB, peer, tunnelStatus, status, isPending, pendingReason } = t;
  return { id, num, deviceA, deviceB, peer, tunnelStatus, status, isPending, pendingReason };
}

export async function orgTunnelRange(db: Db, orgId: string): Promise<string> {
  const org = await db.selectFrom("organizations").select("tunnel_range").where("id", "=", orgId).executeTakeFirstOrThrow();
  return org.tunnel_range;
}

/** How a list reads the tunnels of its page: `select` picks columns of the facts `f` (range table `r` beside them), `item` makes the answer's element. */
interface TunnelRead<R, T> {
  select: (from: TunnelFrom) => SelectQueryBuilder<FactsFrom, "f" | "r", R>;
  item: (row: R) => T;
}
type FactsFrom = { f: TunnelFactsRow; r: { org: string; net: string } };
type TunnelFrom = SelectQueryBuilder<FactsFrom, "f" | "r", object>;

const asObjects = (orgId: string): TunnelRead<TunnelFactsRow & { __tunnel_range: string }, Tunnel> => ({
  select: (from) => from.selectAll("f").select(sql<string>`r.net::text`.as("__tunnel_range")),
  item: (row) => toTunnel(row, orgId, row.__tunnel_range),
});

/** A page of tunnels as objects (`toTunnel`): the internal reads, and the tests' reference for the JSON. */
export function listTunnels(
  ctx: ServiceCtx,
  query: ServerListQuery,
  scope: TunnelScope = {},
): Promise<{ items: Tunnel[]; total: number; next: string | null }> {
  return listTunnelsAs(ctx, query, scope, asObjects(ctx.org.id));
}

/** A page of tunnels as the JSON text of the answer's array, built by the database (list-json.ts). */
export async function listTunnelsJson(
  ctx: ServiceCtx,
  query: ServerListQuery,
  response: "detailed" | "summary",
  scope: TunnelScope = {},
): Promise<{ json: string; total: number; next: string | null }> {
  const json = response === "summary" ? tunnelSummaryJson : tunnelJson;
  const plan = await tunnelListPlan(ctx, query, scope);
  if (!plan.pageFrom) return runListJson(ctx.db, plan.from(scope).select(json.as("json")), query, TUNNEL_LIST, plan.count);
  // The page's ids as a JSON array, then the page's facts joined in that order by the database (runListJson's
  // comment: no rows for the server to parse and keep).
  const page = await runListJson(
    ctx.db,
    ctx.db.selectFrom(plan.pageFrom).select(sql<string>`to_json(f.id)::text`.as("json")),
    query,
    plan.pageSpec,
    plan.count,
  );
  const ids = JSON.parse(page.json) as string[];
  if (ids.length === 0) return page;
  const facts = plan.from({ ids }).select([sql<string>`f.id`.as("id"), json.as("j")]);
  // A tunnel deleted between the two reads is left out of the page.
  const { rows } = await sql<{ json: string }>`select '[' || coalesce(string_agg(p.j::text, ',' order by
      array_position(${toPgArray(ids)}::uuid[], p.id)), '') || ']' as json from (${facts}) as p`.execute(ctx.db);
  return { json: rows[0]!.json, total: page.total, next: page.next };
}

/**
 * How a list of tunnels reads its page: `from` the facts of a scope (with the organization's tunnel range),
 * `count` its total, and `pageFrom`, when set, the cheaper rows its page of ids is chosen on (listTunnelsAs).
 */
async function tunnelListPlan(ctx: ServiceCtx, query: ServerListQuery, scope: TunnelScope) {
  const orgId = ctx.org.id;
  const from = (of: TunnelScope): TunnelFrom => ctx.db.selectFrom([tunnelFacts(orgId, of), tunnelRangeTable(orgId)]);
  const keys = [...query.filter.map((f) => f.key), query.sort ?? TUNNEL_LIST.defaultSort.key];
  // All of the organization's tunnels: their number is kept (db/row-counts.ts).
  const count = { total: isScoped(scope) ? undefined : rowCount(orgId, "tunnels") };
  // Filtered or sorted on an end's interface name: the facts of every tunnel in scope, interfaces included.
  // Otherwise page first, then read the facts of that page only (at 20,000 tunnels, 100 tunnels' facts instead
  // of all of them): on the tunnels table when every key is one of its columns; on the stored status when the
  // others are status fields; else (the ends' names) on every tunnel's facts without the ends' interfaces, whose
  // taking apart and joining was half of a page sorted by status (EXPLAIN ANALYZE at 20,000 tunnels on PostgreSQL:
  // 145 ms with them, 70 ms without). The page's facts are read a moment after its ids were chosen: a tunnel whose
  // status changed in between shows its new status.
  if (readsInterfaces(keys)) return { from, count, pageFrom: undefined, pageSpec: TUNNEL_LIST };
  if (keys.every((k) => TUNNEL_TABLE_KEYS.has(k))) {
    const tunnels = sql`(select * from tunnels t where ${tunnelScopeWhere(orgId, scope)})`.as("f");
    return { from, count, pageFrom: tunnels, pageSpec: TUNNEL_LIST };
  }
  // All of the organization's tunnels sorted or filtered on status fields and their own columns only: on the stored
  // status (stored-status.ts), an index walk instead of every tunnel's facts (75 ms at 20,000 tunnels,
  // docs/scale.md), unless so many tunnels are marked (a fleet reconnecting) that deriving them one device at a
  // time would cost more than all at once. A scoped list (one device's tunnels) reads its few tunnels' facts.
  const statusKeys = keys.every((k) => TUNNEL_TABLE_KEYS.has(k) || Object.hasOwn(STORED_STATUS_FIELDS, k));
  if (statusKeys && !isScoped(scope) && !(await manyMarked(ctx.db, orgId)))
    return { from, count, pageFrom: storedStatusFacts(orgId), pageSpec: TUNNEL_STORED_LIST };
  return { from, count, pageFrom: tunnelFacts(orgId, scope, { interfaces: false }), pageSpec: TUNNEL_LIST };
}

async function listTunnelsAs<R, T>(
  ctx: ServiceCtx,
  query: ServerListQuery,
  scope: TunnelScope,
  read: TunnelRead<R, T>,
): Promise<{ items: T[]; total: number; next: string | null }> {
  const { from, count, pageFrom, pageSpec } = await tunnelListPlan(ctx, query, scope);
  if (!pageFrom) {
    const { rows, total, next } = await runList(ctx.db, read.select(from(scope)), query, TUNNEL_LIST, count);
    return { items: rows.map(read.item), total, next };
  }
  const {
    rows: page,
    total,
    next,
  } = await runList(ctx.db, ctx.db.selectFrom(pageFrom).select(sql<string>`f.id`.as("id")), query, pageSpec, count);
  if (page.length === 0) return { items: [], total, next };
  const rows = (await read.select(from({ ids: page.map((r) => r.id) })).execute()) as (R & { id: string })[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  // A tunnel deleted between the two reads is left out of the page.
  const items = page.flatMap((r) => {
    const row = byId.get(r.id);
    return row ? [read.item(row)] : [];
  });
  return { items, total, next };
}

/** TUNNEL_LIST keys read from the ends' interfaces: only the facts with `interfaces` filter and sort on them. */
const INTERFACE_KEYS = new Set(["interfaceA.name", "interfaceB.name"]);

/** Whether a filter or sort on these TUNNEL_LIST keys needs the facts' interface columns. */
export const readsInterfaces = (keys: readonly string[]): boolean => keys.some((k) => INTERFACE_KEYS.has(k));

/** TUNNEL_LIST keys whose column is a column of the tunnels table (as `f.<column>`). */
const TUNNEL_TABLE_KEYS = new Set([
  "id",
  "num",
  "description",
  "device.id",
  "deviceA.id",
  "deviceB.id",
  "interfaceA.id",
  "interfaceB.id",
  "peer.id",
  "pathlabel",
  "createdAt",
]);

export async function getTunnel(ctx: ServiceCtx, id: string): Promise<Tunnel> {
  const row = await ctx.db
    .selectFrom(tunnelFacts(ctx.org.id, { ids: [id] }))
    .selectAll()
    .executeTakeFirst();
  if (!row) throw notFound("tunnel");
  return toTunnel(row as TunnelFactsRow, ctx.org.id, await orgTunnelRange(ctx.db, ctx.org.id));
}
