/**
 * The open notifications of status events (`STATUS_EVENTS`) for devices the
 * rule engine starts tracking: what it had raised before the device's link
 * (or the server) went away, so it goes on from there instead of raising them
 * again. One read for a batch of devices arriving together, served by
 * `notifications_device_idx` (migration 20261207-101).
 */
import type { Selectable } from "kysely";
import type { Db, NotificationsTable } from "../db/schema.ts";
import { anyUuid } from "../services/desired-config.ts";
import { STATUS_EVENTS } from "./evaluate-status.ts";

export type OpenCondition = Pick<
  Selectable<NotificationsTable>,
  "organization_id" | "device_id" | "dedup_key" | "event_type" | "severity"
>;

/** The read itself, for a plan check (test/db/notifications-device-index.test.ts). */
export function openConditionsQuery(db: Db, deviceIds: readonly string[]) {
  return db
    .selectFrom("notifications")
    .select(["organization_id", "device_id", "dedup_key", "event_type", "severity"])
    .where("device_id", "=", anyUuid(deviceIds))
    .where("resolved", "=", false)
    .where("event_type", "in", [...STATUS_EVENTS]);
}

export function loadOpenConditions(db: Db, deviceIds: readonly string[]): Promise<OpenCondition[]> {
  if (deviceIds.length === 0) return Promise.resolve([]);
  return openConditionsQuery(db, deviceIds).execute();
}
