/**
 * Issue 18: self-service sign-up for the shared SaaS option and diagnostic
 * dumps requested from devices.
 * - accounts get a `plan` and per-plan limits (null = unlimited, the
 *   self-hosting default for every account that exists before this);
 * - account_signups holds a sign-up until its e-mail is verified: the
 *   password only as its scrypt hash, the token only as its SHA-256;
 * - device_dumps holds the archives devices uploaded on request (bytea, so
 *   every instance can serve them), newest few per device.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("accounts")
    .addColumn("plan", "text")
    .addColumn("max_devices", "integer", (c) => c.check(sql`max_devices >= 0`))
    .addColumn("max_organizations", "integer", (c) => c.check(sql`max_organizations >= 0`))
    .execute();

  await db.schema
    .createTable("account_signups")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("organization_name", "text", (c) => c.notNull())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("used_at", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("account_signups_email").on("account_signups").column("email").execute();

  await db.schema
    .createTable("device_dumps")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("device_id", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'complete', 'failed')`))
    .addColumn("file_name", "text")
    .addColumn("size_bytes", "integer")
    .addColumn("sha256", "text")
    .addColumn("content", "bytea")
    .addColumn("error", "text")
    .addColumn("requested_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("completed_at", "timestamptz(3)")
    .execute();
  await db.schema.createIndex("device_dumps_device").on("device_dumps").columns(["device_id", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("device_dumps").execute();
  await db.schema.dropTable("account_signups").execute();
  await db.schema.alterTable("accounts").dropColumn("plan").dropColumn("max_devices").dropColumn("max_organizations").execute();
}
