/**
 * The notifications list built as JSON by the database (issue 14), as the
 * devices summary, the tunnels and the jobs are: each row of
 * `GET /api/notifications` becomes its `Notification` object already
 * (db/json.ts's concatenated text, keys in `toNotification`'s order), joined by the
 * database into the answer's array (`runListJson`).
 *
 * Same values as `toNotification` (notifications.ts), which the events and
 * the tests keep using; notifications-list-json.test.ts compares the two.
 * `targets` gets `bgpNeighbor: null` when it has none, as there; its keys
 * come in jsonb's order rather than with `bgpNeighbor` last (the same
 * object).
 */
import { sql } from "kysely";
import { constantSql } from "../../db/constant-sql.ts";
import { jsonAsIs, jsonObject, jsonQuoted, jsonString, jsonTimestamp } from "../../db/json.ts";

const n = (column: string) => sql.ref(`n.${column}`);

/** A `Notification` of row `n`, as JSON text. */
export const notificationJson = constantSql(
  jsonObject({
    id: jsonQuoted(n("id")),
    org: jsonQuoted(n("organization_id")),
    deviceId: jsonQuoted(n("device_id")),
    eventType: jsonString(n("event_type")),
    title: jsonString(n("title")),
    details: jsonString(n("details")),
    severity: jsonString(n("severity")),
    targets: jsonAsIs(sql`n.targets || jsonb_build_object('bgpNeighbor', coalesce(n.targets -> 'bgpNeighbor', 'null'::jsonb))`),
    count: jsonAsIs(n("count")),
    resolved: jsonAsIs(n("resolved")),
    status: jsonQuoted(sql`case when n.is_read then 'read' else 'unread' end`),
    createdAt: jsonTimestamp(n("created_at")),
    lastSeenAt: jsonTimestamp(n("last_seen_at")),
    resolvedAt: jsonTimestamp(n("resolved_at")),
  }),
);
