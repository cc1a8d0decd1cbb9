/**
 * Identity and tenancy: accounts → organizations, users with memberships,
 * login sessions (refresh tokens), access tokens and the audit log.
 * Frozen once landed: change the schema with a new migration.
 * Timestamps have millisecond precision, like the ISO strings of the API, so a
 * value read from the API filters back exactly.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .createTable("accounts")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("company_type", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("trial_end", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("organizations")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("group_name", "text", (c) => c.notNull().defaultTo("Default"))
    .addColumn("tunnel_range", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("organizations_account_name_key", ["account_id", "name"])
    .execute();

  await db.schema
    .createTable("users")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    // text equality is case sensitive, as the spec requires for login e-mails.
    .addColumn("email", "text", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("default_org_id", "uuid", (c) => c.references("organizations.id").onDelete("set null"))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("memberships")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("account_id", "uuid", (c) => c.references("accounts.id").onDelete("cascade"))
    .addColumn("organization_id", "uuid", (c) => c.references("organizations.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'manager', 'viewer')`))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addCheckConstraint("memberships_one_scope", sql`(account_id is null) <> (organization_id is null)`)
    .execute();
  await db.schema
    .createIndex("memberships_user_account_key")
    .on("memberships")
    .columns(["user_id", "account_id"])
    .unique()
    .where(sql.ref("account_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("memberships_user_org_key")
    .on("memberships")
    .columns(["user_id", "organization_id"])
    .unique()
    .where(sql.ref("organization_id"), "is not", null)
    .execute();
  await db.schema.createIndex("memberships_org_idx").on("memberships").column("organization_id").execute();
  await db.schema.createIndex("memberships_account_idx").on("memberships").column("account_id").execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("refresh_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("revoked_at", "timestamptz(3)")
    .addColumn("ip", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("user_agent", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("last_used_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("sessions_user_idx").on("sessions").column("user_id").execute();

  await db.schema
    .createTable("access_tokens")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'manager', 'viewer')`))
    .addColumn("permissions", "jsonb", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("creator", "text", (c) => c.notNull())
    // The user at the root of the chain of creators: a key never exceeds this user's current rights.
    .addColumn("creator_user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("parent_token_id", "uuid", (c) => c.references("access_tokens.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("last_used_at", "timestamptz(3)")
    .execute();
  await db.schema.createIndex("access_tokens_org_idx").on("access_tokens").column("organization_id").execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    // No foreign keys: the history outlives what it describes.
    .addColumn("account_id", "uuid")
    .addColumn("organization_id", "uuid")
    .addColumn("actor", "text", (c) => c.notNull())
    .addColumn("actor_user_id", "uuid")
    .addColumn("actor_token_id", "uuid")
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("resource", "text", (c) => c.notNull())
    .addColumn("resource_id", "text")
    .addColumn("before", "jsonb")
    .addColumn("after", "jsonb")
    .addColumn("at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("audit_log_org_at_idx").on("audit_log").columns(["organization_id", "at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["audit_log", "access_tokens", "sessions", "memberships", "users", "organizations", "accounts"]) {
    await db.schema.dropTable(table).execute();
  }
}
