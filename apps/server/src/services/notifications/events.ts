/**
 * Raising and resolving notifications: what the rule engine (device gateway,
 * job engine) calls when a condition starts, repeats or clears. A condition is
 * identified by its event type and targets (the dedup key); while it is open,
 * a repeat increments `count` and `last_seen_at` of the one open row instead
 * of adding rows, so a flapping tunnel cannot flood the list. The partial
 * unique index `notifications_open_key` makes that hold under concurrency.
 */
import { randomUUID } from "node:crypto";
import { NOTIFICATION_TITLES, type Notification, type NotificationEvent, type Severity } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../db/json.ts";
import type { Db, NotificationRow } from "../../db/schema.ts";
import { toNotification } from "./notifications.ts";

export interface NotificationTargets {
  deviceId?: string | null;
  tunnelId?: string | null;
  interfaceId?: string | null;
  vrrpGroupId?: string | null;
  /** A BGP neighbor's address. */
  bgpNeighbor?: string | null;
}

/** A condition: the event and what it is about. */
export interface NotificationCondition {
  eventType: NotificationEvent;
  targets: NotificationTargets;
}

export interface RaiseNotificationInput extends NotificationCondition {
  /** The device the notification is listed under; defaults to `targets.deviceId`. */
  deviceId?: string | null;
  severity: Severity;
  /** Human text, e.g. "RTT 812 ms exceeds the critical threshold 600 ms". */
  details: string;
  /** Defaults to the event's title. */
  title?: string;
}

export interface RaisedNotification {
  notification: Notification;
  /** A new row: deliver it. */
  created: boolean;
  /** An open condition got a higher severity: deliver again. */
  escalated: boolean;
}

/** What raise/resolve need: a database handle (a transaction or not) and the organization. */
export interface NotificationCtx {
  db: Db;
  org: { id: string };
}

const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };
const RANK = sql`(case excluded.severity when 'info' then 0 when 'warning' then 1 else 2 end)`;
const CURRENT_RANK = sql`(case notifications.severity when 'info' then 0 when 'warning' then 1 else 2 end)`;

function fullTargets(t: NotificationTargets) {
  return {
    deviceId: t.deviceId ?? null,
    tunnelId: t.tunnelId ?? null,
    interfaceId: t.interfaceId ?? null,
    vrrpGroupId: t.vrrpGroupId ?? null,
    bgpNeighbor: t.bgpNeighbor ?? null,
  };
}

/**
 * The dedup key of a condition: the event plus every target, in a fixed order
 * (the BGP neighbor, added later, only when set: older keys stay as they were).
 */
export function notificationDedupKey(condition: NotificationCondition): string {
  const t = fullTargets(condition.targets);
  return [
    condition.eventType,
    `device=${t.deviceId ?? ""}`,
    `tunnel=${t.tunnelId ?? ""}`,
    `interface=${t.interfaceId ?? ""}`,
    `vrrp=${t.vrrpGroupId ?? ""}`,
    ...(t.bgpNeighbor ? [`bgp=${t.bgpNeighbor}`] : []),
  ].join("|");
}

/**
 * Records that a condition holds. A new condition inserts a row; a repeat of an
 * open one increments its count, moves `last_seen_at`, takes the new severity
 * and details, and turns unread again when the severity rose.
 */
export async function raiseNotification(ctx: NotificationCtx, input: RaiseNotificationInput): Promise<RaisedNotification> {
  const targets = fullTargets(input.targets);
  const id = randomUUID();
  const dedupKey = notificationDedupKey(input);
  const row = await ctx.db
    // The open row as it was before this statement, to tell a repeat from an escalation.
    .with("prev", (db) =>
      db
        .selectFrom("notifications")
        .select("severity")
        .where("organization_id", "=", ctx.org.id)
        .where("dedup_key", "=", dedupKey)
        .where("resolved", "=", sql.lit(false)),
    )
    .insertInto("notifications")
    .values({
      id,
      organization_id: ctx.org.id,
      device_id: input.deviceId ?? targets.deviceId,
      event_type: input.eventType,
      title: input.title ?? NOTIFICATION_TITLES[input.eventType],
      details: input.details,
      severity: input.severity,
      targets: toJson(targets),
      dedup_key: dedupKey,
    })
    .onConflict((oc) =>
      oc
        .columns(["organization_id", "dedup_key"])
        // A literal, not a parameter: the partial unique index (where not resolved) is matched when the
        // statement is planned, and a generic plan (db/prepared-client.ts) cannot see a parameter's value.
        .where("resolved", "=", sql.lit(false))
        .doUpdateSet({
          count: sql`notifications.count + 1`,
          last_seen_at: sql`now()`,
          details: sql`excluded.details`,
          severity: sql`excluded.severity`,
          is_read: sql`notifications.is_read and ${RANK} <= ${CURRENT_RANK}`,
        }),
    )
    .returningAll()
    .returning(sql<Severity | null>`(select severity from prev limit 1)`.as("previous_severity"))
    .executeTakeFirstOrThrow();
  const { previous_severity: previous, ...stored } = row;
  const created = stored.id === id;
  return {
    notification: toNotification(stored),
    created,
    escalated: !created && previous !== null && SEVERITY_RANK[input.severity] > SEVERITY_RANK[previous],
  };
}

/**
 * Records that a condition cleared: resolves its open notification (by dedup
 * key or by condition). Returns it, so the caller can send a "resolved" alert
 * when the rule asks for one, or null when nothing was open.
 */
export async function resolveNotification(
  ctx: NotificationCtx,
  key: string | NotificationCondition,
): Promise<Notification | null> {
  const dedupKey = typeof key === "string" ? key : notificationDedupKey(key);
  const [resolved] = await resolveNotificationsMany(ctx.db, [{ orgId: ctx.org.id, dedupKeys: [dedupKey] }]);
  return resolved?.[0] ?? null;
}

/**
 * resolveNotification for several organizations' keys in one statement (the
 * rule engine's resolves of devices reconnecting together): per item, the
 * notifications it resolved.
 */
export async function resolveNotificationsMany(
  db: Db,
  items: readonly { orgId: string; dedupKeys: readonly string[] }[],
): Promise<Notification[][]> {
  const orgs = items.flatMap((i) => i.dedupKeys.map(() => i.orgId));
  const keys = items.flatMap((i) => i.dedupKeys);
  if (keys.length === 0) return items.map(() => []);
  const { rows } = await sql<NotificationRow>`update notifications n set resolved = true, resolved_at = now()
    from unnest(${orgs}::uuid[], ${keys}::text[]) as u(organization_id, dedup_key)
    where n.organization_id = u.organization_id and n.dedup_key = u.dedup_key and n.resolved = false
    returning n.*`.execute(db);
  const byKey = new Map(rows.map((r) => [`${r.organization_id}/${r.dedup_key}`, r]));
  return items.map((i) =>
    i.dedupKeys.flatMap((k) => {
      const key = `${i.orgId}/${k}`;
      const row = byKey.get(key);
      // A key asked twice is resolved once: the first asker gets it, as if they had run one after the other.
      byKey.delete(key);
      return row ? [toNotification(row)] : [];
    }),
  );
}
