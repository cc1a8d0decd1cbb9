/**
 * An index on `notifications (device_id)`, for the two reads that find a
 * device's notifications whatever their state (issue 14):
 * - the notification engine, loading the open notifications of devices that
 *   just connected (`notify/engine.ts` `loadMany`: `device_id = any(...) and
 *   not resolved`); the partial `notifications_pending_idx` covers unread ones
 *   only, so each batch of connecting devices read the whole table (20,000
 *   rows, 1.9 ms a batch at 10,000 devices, and more with every notification
 *   kept);
 * - deleting a device, whose notifications go with it (`on delete cascade`):
 *   a scan of the whole table for each device deleted.
 * Frozen once landed: change the schema with a new migration.
 */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("notifications_device_idx").on("notifications").column("device_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("notifications_device_idx").execute();
}
