/**
 * Stored notifications as admins see them: list with the list conventions,
 * mark read/unread (and resolved) by ids or by filter, delete by filter.
 * Raising and resolving them is notification-events.ts.
 */
import type { Filter, Notification, NotificationEvent } from "@tern/protocol";
import { type Expression, type SqlBool, sql } from "kysely";
import { rowCount } from "../../db/row-counts.ts";
import type { NotificationRow } from "../../db/schema.ts";
import { invalidField } from "../../http/errors.ts";
import { filterCondition, type ListSpec, runList, runListJson, type ServerListQuery } from "../../http/list-query.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { notificationJson } from "./list-json.ts";

export function toNotification(row: NotificationRow): Notification {
  return {
    id: row.id,
    org: row.organization_id,
    deviceId: row.device_id,
    eventType: row.event_type as NotificationEvent,
    title: row.title,
    details: row.details,
    severity: row.severity,
    targets: { ...row.targets, bgpNeighbor: row.targets.bgpNeighbor ?? null },
    count: row.count,
    resolved: row.resolved,
    status: row.is_read ? "read" : "unread",
    createdAt: row.created_at.toISOString(),
    lastSeenAt: row.last_seen_at.toISOString(),
    resolvedAt: row.resolved_at ? row.resolved_at.toISOString() : null,
  };
}

/** Filter and sort keys of `GET/PUT/DELETE /notifications` (documented on the routes). */
export const NOTIFICATION_LIST: ListSpec = {
  fields: {
    id: { column: "n.id", type: "uuid" },
    deviceId: { column: "n.device_id", type: "uuid" },
    "device.name": { column: sql`(select d.name from devices d where d.id = n.device_id)`, type: "text" },
    eventType: { column: "n.event_type", type: "text" },
    title: { column: "n.title", type: "text" },
    details: { column: "n.details", type: "text" },
    // Sorting by severity means by rank, not alphabetically.
    severity: {
      column: sql`(case n.severity when 'info' then 0 when 'warning' then 1 else 2 end)`,
      type: "number",
      filterable: false,
    },
    resolved: { column: "n.resolved", type: "boolean" },
    status: { column: sql`(case when n.is_read then 'read' else 'unread' end)`, type: "text" },
    count: { column: "n.count", type: "number" },
    tunnelId: { column: sql`(n.targets->>'tunnelId')`, type: "text" },
    interfaceId: { column: sql`(n.targets->>'interfaceId')`, type: "text" },
    vrrpGroupId: { column: sql`(n.targets->>'vrrpGroupId')`, type: "text" },
    bgpNeighbor: { column: sql`(n.targets->>'bgpNeighbor')`, type: "text" },
    createdAt: { column: "n.created_at", type: "timestamp" },
    lastSeenAt: { column: "n.last_seen_at", type: "timestamp" },
    resolvedAt: { column: "n.resolved_at", type: "timestamp" },
  },
  defaultSort: { key: "lastSeenAt", order: "desc" },
  tiebreaker: "n.id",
};
// Severity filters compare the stored text (`== critical`, `in [...]`); sorting uses the rank above.
const FILTER_SPEC: ListSpec = {
  ...NOTIFICATION_LIST,
  fields: { ...NOTIFICATION_LIST.fields, severity: { column: "n.severity", type: "text" } },
};
const ORDERED_OPS = new Set(["<", ">", "<=", ">="]);

/** Severity text does not order like severity; refuse `<`/`>` on it rather than compare alphabetically. */
function notificationFilters(filters: readonly Filter[]): Expression<SqlBool>[] {
  return filters.map((f, i) => {
    if (f.key === "severity" && ORDERED_OPS.has(f.op))
      throw invalidField(`filter.${i}.op`, "severity takes ==, !=, in, contains or !contains (info, warning, critical)");
    return filterCondition(f, FILTER_SPEC, i);
  });
}

/** The organization's notifications with the list's filters, and how their total is had. */
function listed(ctx: ServiceCtx, query: ServerListQuery) {
  const base = ctx.db.selectFrom("notifications as n").where("n.organization_id", "=", ctx.org.id);
  const filtered = notificationFilters(query.filter).reduce((q, c) => q.where(c), base);
  // The filters are applied here: the kept number (db/row-counts.ts) is the total only without them.
  const count = { total: query.filter.length === 0 ? rowCount(ctx.org.id, "notifications") : undefined };
  return { filtered, query: { ...query, filter: [] }, count };
}

export async function listNotifications(ctx: ServiceCtx, query: ServerListQuery) {
  const list = listed(ctx, query);
  const { rows, total, next } = await runList(ctx.db, list.filtered.selectAll("n"), list.query, NOTIFICATION_LIST, list.count);
  return { items: rows.map(toNotification), total, next };
}

/** The same page as the JSON text of the answer's array, built by the database (list-json.ts). */
export async function listNotificationsJson(
  ctx: ServiceCtx,
  query: ServerListQuery,
): Promise<{ json: string; total: number; next: string | null }> {
  const list = listed(ctx, query);
  const page = list.filtered.select(notificationJson.as("json"));
  return runListJson(ctx.db, page, list.query, NOTIFICATION_LIST, list.count);
}

/** Which notifications a bulk change touches: the given ids, or every one matching the filter (`[]` = all). */
export interface NotificationSelection {
  ids?: readonly string[];
  filter?: readonly Filter[];
}

function selectionCondition(selection: NotificationSelection): Expression<SqlBool>[] {
  const hasIds = selection.ids !== undefined;
  const hasFilter = selection.filter !== undefined;
  if (hasIds === hasFilter)
    throw invalidField(
      hasIds ? "filter" : "ids",
      "give either ids in the body or a filter query (filter=[] selects every notification), not both or neither",
    );
  if (hasIds) return [sql<SqlBool>`n.id = ${anyUuid(selection.ids ?? [])}`];
  return notificationFilters(selection.filter ?? []);
}

export interface NotificationsMark {
  status?: "read" | "unread";
  resolved?: true;
}

/** Marks the selected notifications read/unread and/or resolved; answers how many changed. */
export async function markNotifications(
  ctx: ServiceCtx,
  selection: NotificationSelection,
  mark: NotificationsMark,
): Promise<{ updated: number }> {
  const conditions = selectionCondition(selection);
  return inTransaction(ctx, async (tx) => {
    let query = tx.db
      .updateTable("notifications as n")
      .where("n.organization_id", "=", tx.org.id)
      .set({
        ...(mark.status ? { is_read: mark.status === "read" } : {}),
        // A resolved notification keeps its first resolution time.
        ...(mark.resolved ? { resolved: true, resolved_at: sql`coalesce(n.resolved_at, now())` } : {}),
      });
    for (const c of conditions) query = query.where(c);
    const rows = await query.returning("n.id").execute();
    await recordAudit(tx, {
      action: "update",
      resource: "notifications",
      resourceId: null,
      after: {
        ...mark,
        selection: selection.ids ? { ids: selection.ids.length } : { filter: selection.filter },
        updated: rows.length,
      },
    });
    return { updated: rows.length };
  });
}

/** Deletes every notification matching the filter (`[]` = all of the organization's). */
export async function deleteNotifications(ctx: ServiceCtx, filter: readonly Filter[] | undefined): Promise<{ deleted: number }> {
  if (filter === undefined) throw invalidField("filter", "give a filter (filter=[] deletes every notification)");
  const conditions = selectionCondition({ filter });
  return inTransaction(ctx, async (tx) => {
    let query = tx.db.deleteFrom("notifications as n").where("n.organization_id", "=", tx.org.id);
    for (const c of conditions) query = query.where(c);
    const rows = await query.returning("n.id").execute();
    await recordAudit(tx, {
      action: "delete",
      resource: "notifications",
      resourceId: null,
      before: { filter, deleted: rows.length },
    });
    return { deleted: rows.length };
  });
}
