/**
 * The notifications list built as JSON by the database (issue 14), as the
 * devices summary, the tunnels and the jobs are: each row of
 * `GET /api/notifications` becomes its `Notification` object already
 * (`json_build_object`, keys in `toNotification`'s order), joined by the
 * database into the answer's array (`runListJson`).
 *
 * Same values as `toNotification` (notifications.ts), which the events and
 * the tests keep using; notifications-list-json.test.ts compares the two.
 * `targets` gets `bgpNeighbor: null` when it has none, as there; its keys
 * come in jsonb's order rather than with `bgpNeighbor` last (the same
 * object).
 */
import { sql } from "kysely";
import { isoTimestampSql } from "../../db/json.ts";

/** A `Notification` of row `n`, as JSON text. */
export const notificationJson = sql<string>`json_build_object(
    'id', n.id, 'org', n.organization_id, 'deviceId', n.device_id, 'eventType', n.event_type,
    'title', n.title, 'details', n.details, 'severity', n.severity,
    'targets', n.targets || jsonb_build_object('bgpNeighbor', coalesce(n.targets -> 'bgpNeighbor', 'null'::jsonb)),
    'count', n.count, 'resolved', n.resolved, 'status', case when n.is_read then 'read' else 'unread' end,
    'createdAt', ${isoTimestampSql(sql.ref("n.created_at"))}, 'lastSeenAt', ${isoTimestampSql(sql.ref("n.last_seen_at"))},
    'resolvedAt', ${isoTimestampSql(sql.ref("n.resolved_at"))}
  )::text`;
