/**
 * Two-factor sign-in (TOTP with recovery codes, second-factor challenges, the
 * organizations' "require 2FA" setting) and single sign-on with OpenID Connect
 * (identity providers, pending sign-in flows).
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  await db.schema
    .alterTable("organizations")
    .addColumn("require_mfa", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();

  await db.schema
    .createTable("user_mfa")
    .addColumn("user_id", "uuid", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    // keyring.encrypt(base32 secret, "user-mfa:<user id>")
    .addColumn("secret_enc", "text", (c) => c.notNull())
    // null while the enrolment waits for its first valid code
    .addColumn("enabled_at", "timestamptz(3)")
    // the TOTP time step of the last accepted code: a code of that step or earlier is a replay
    .addColumn("last_time_step", "integer")
    .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("blocked_until", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable("mfa_recovery_codes")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("used_at", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("mfa_recovery_codes_user_idx").on("mfa_recovery_codes").column("user_id").execute();

  await db.schema
    .createTable("mfa_challenges")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("user_id", "uuid", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("used_at", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("mfa_challenges_user_idx").on("mfa_challenges").column("user_id").execute();

  await db.schema
    .createTable("sso_providers")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("client_id", "text", (c) => c.notNull())
    // keyring.encrypt(secret, "sso-provider:<id>")
    .addColumn("client_secret_enc", "text", (c) => c.notNull())
    .addColumn("allowed_domains", "jsonb", (c) => c.notNull())
    .addColumn("default_role", "text", (c) => c.notNull().check(sql`default_role in ('manager', 'viewer')`))
    .addColumn("membership_scope", "text", (c) => c.notNull().check(sql`membership_scope in ('organization', 'account')`))
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("sso_providers_org_name_key", ["organization_id", "name"])
    .execute();

  await db.schema
    .createTable("sso_logins")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("provider_id", "uuid", (c) => c.notNull().references("sso_providers.id").onDelete("cascade"))
    .addColumn("state_hash", "text", (c) => c.notNull().unique())
    // hash of the value of the browser cookie set at start: binds the callback to the browser that started
    .addColumn("binding_hash", "text", (c) => c.notNull())
    .addColumn("code_verifier_enc", "text", (c) => c.notNull())
    .addColumn("nonce", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("used_at", "timestamptz(3)")
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["sso_logins", "sso_providers", "mfa_challenges", "mfa_recovery_codes", "user_mfa"]) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable("organizations").dropColumn("require_mfa").execute();
}
