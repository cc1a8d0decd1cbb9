/**
 * Account security: password-reset tokens and invitations (both stored as
 * SHA-256 hashes of full-entropy secrets, single use, expiring), and a use
 * limit on registration tokens.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable("password_resets")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("used_at", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("password_resets_user_idx").on("password_resets").column("user_id").execute();

  await db.schema
    .createTable("invitations")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    // Null: an invitation to the whole account.
    .addColumn("organization_id", "uuid", (c) => c.references("organizations.id").onDelete("cascade"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'manager', 'viewer')`))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("invited_by", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("accepted_at", "timestamptz(3)")
    .addColumn("accepted_user_id", "uuid", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("revoked_at", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("invitations_account_idx").on("invitations").column("account_id").execute();

  await db.schema
    .alterTable("registration_tokens")
    .addColumn("max_uses", "integer", (c) => c.check(sql`max_uses > 0`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("registration_tokens").dropColumn("max_uses").execute();
  await db.schema.dropTable("invitations").execute();
  await db.schema.dropTable("password_resets").execute();
}
