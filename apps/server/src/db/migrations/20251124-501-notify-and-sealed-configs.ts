/**
 * Issue 5, second half: the notification engine's state and delivery log,
 * and desired configs sealed at rest.
 *
 * - `devices.desired_config` held compiled configs in clear jsonb, tunnel and
 *   peer PSKs included. It is replaced by `desired_config_enc` (AES-256-GCM
 *   with the server key, decrypted only to send an apply) and
 *   `desired_tunnel_ids` (what tunnel status needs to know without the
 *   secret-bearing config). A migration has no server key, so existing clear
 *   configs are moved to `desired_config_legacy`, which the server encrypts
 *   into `desired_config_enc` and empties at its next start
 *   (`sealLegacyDesiredConfigs`); no code reads the legacy column.
 * - `devices.disconnected_at`: when the device's link ended, so the "device
 *   connection" alert's grace period is judged from the database by whichever
 *   instance runs the periodic duty, not by the instance that saw the link end.
 * - `tunnels.pending_since`: when the periodic check first saw the tunnel
 *   pending ("pending tunnel" alerts after a grace period).
 * - `notification_deliveries`: one row per delivery attempt (e-mail, webhook).
 *
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addColumn("desired_config_enc", "text")
    .addColumn("desired_tunnel_ids", sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'::uuid[]`))
    .addColumn("disconnected_at", "timestamptz(3)")
    .execute();
  await sql`update devices set desired_tunnel_ids = array(
      select (x ->> 'id')::uuid from jsonb_array_elements(coalesce(desired_config -> 'tunnels', '[]'::jsonb)) x)
    where desired_config is not null`.execute(db);
  await sql`update devices set disconnected_at = coalesce(last_seen_at, now()) where connection = 'disconnected'`.execute(db);
  await db.schema.alterTable("devices").renameColumn("desired_config", "desired_config_legacy").execute();

  await db.schema.alterTable("tunnels").addColumn("pending_since", "timestamptz(3)").execute();

  await db.schema
    .createTable("notification_deliveries")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    // The log outlives a deleted notification: what was sent stays visible.
    .addColumn("notification_id", "uuid", (c) => c.references("notifications.id").onDelete("set null"))
    // One delivery (to one channel) keeps its id across retries.
    .addColumn("delivery_id", "uuid", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull().check(sql`channel in ('email', 'webhook')`))
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('delivered', 'retrying', 'failed')`))
    .addColumn("response_code", "integer")
    .addColumn("error", "text")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("notification_deliveries_org_at_idx")
    .on("notification_deliveries")
    .columns(["organization_id", "at"])
    .execute();
  // Retention deletes by age across organizations.
  await db.schema.createIndex("notification_deliveries_at_idx").on("notification_deliveries").column("at").execute();
  await db.schema
    .createIndex("notification_deliveries_notification_idx")
    .on("notification_deliveries")
    .column("notification_id")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("notification_deliveries").execute();
  await db.schema.alterTable("tunnels").dropColumn("pending_since").execute();
  await db.schema.alterTable("devices").renameColumn("desired_config_legacy", "desired_config").execute();
  await db.schema
    .alterTable("devices")
    .dropColumn("desired_config_enc")
    .dropColumn("desired_tunnel_ids")
    .dropColumn("disconnected_at")
    .execute();
}
