/**
 * Installations of a purchased application on devices (issue 18, remote
 * worker VPN): one row per application and device, with the per-device
 * settings (virtual IP pool, DNS, split-tunnel subnets). The desired config of
 * a device is compiled from these rows and the application's state (its CA,
 * server certificate and users). Rows go with the purchase or the device.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("app_installations")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("purchase_id", "uuid", (c) => c.notNull().references("purchased_apps.id").onDelete("cascade"))
    .addColumn("device_id", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("settings", "jsonb", (c) => c.notNull())
    .addColumn("installed_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("app_installations_purchase_device_key", ["purchase_id", "device_id"])
    .execute();
  // The compile step looks installations up by device.
  await db.schema.createIndex("app_installations_device_idx").on("app_installations").column("device_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("app_installations").execute();
}
