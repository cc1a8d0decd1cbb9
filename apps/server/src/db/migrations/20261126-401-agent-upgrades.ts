/**
 * Issue 19, staged agent upgrades (docs/upgrades.md):
 * - agent_signing_keys: the Ed25519 public keys an account's operator signs packages with;
 * - agent_packages: uploaded, signed agent packages (bytea, so every instance can send them), one per version and account;
 * - agent_rollouts / agent_rollout_devices: an organization's upgrade of a set of devices to a package, and each
 *   device's progress (its row id is the `upgradeId` the agent echoes back);
 * - a live event (`upgrade`) for every change of a device's progress, so the console follows it.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("agent_signing_keys")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("agent_signing_keys_account_key", ["account_id", "public_key"])
    .execute();

  await db.schema
    .createTable("agent_packages")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("size_bytes", "integer", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("signing_key_id", "uuid", (c) => c.notNull().references("agent_signing_keys.id"))
    .addColumn("content", "bytea", (c) => c.notNull())
    .addColumn("uploaded_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("agent_packages_account_version", ["account_id", "version"])
    .execute();

  await db.schema
    .createTable("agent_rollouts")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("package_id", "uuid", (c) => c.notNull().references("agent_packages.id"))
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('running', 'paused', 'cancelled', 'complete')`))
    .addColumn("paused_reason", "text")
    .addColumn("window_start", "text")
    .addColumn("window_end", "text")
    .addColumn("canary_percent", "integer", (c) => c.notNull())
    .addColumn("batch_size", "integer", (c) => c.notNull())
    .addColumn("health_timeout_sec", "integer", (c) => c.notNull())
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("agent_rollouts_org").on("agent_rollouts").columns(["organization_id", "created_at"]).execute();
  await db.schema.createIndex("agent_rollouts_package").on("agent_rollouts").column("package_id").execute();

  await db.schema
    .createTable("agent_rollout_devices")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("rollout_id", "uuid", (c) => c.notNull().references("agent_rollouts.id").onDelete("cascade"))
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("device_id", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("device_name", "text", (c) => c.notNull())
    .addColumn("canary", "boolean", (c) => c.notNull())
    .addColumn("batch", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) =>
      c.notNull().check(sql`state in ('pending', 'sending', 'installing', 'upgraded', 'rolled-back', 'failed', 'skipped')`),
    )
    .addColumn("from_version", "text", (c) => c.notNull())
    .addColumn("detail", "text")
    .addColumn("started_at", "timestamptz(3)")
    .addColumn("deadline_at", "timestamptz(3)")
    .addColumn("finished_at", "timestamptz(3)")
    .addUniqueConstraint("agent_rollout_devices_once", ["rollout_id", "device_id"])
    .execute();
  await db.schema
    .createIndex("agent_rollout_devices_state")
    .on("agent_rollout_devices")
    .columns(["rollout_id", "state"])
    .execute();
  await db.schema.createIndex("agent_rollout_devices_device").on("agent_rollout_devices").column("device_id").execute();

  await sql`create function tern_live_agent_upgrades() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and old.state is not distinct from new.state then return null; end if;
      perform tern_live_event(new.organization_id, 'upgrade',
        case tg_op when 'INSERT' then 'created' else 'updated' end, new.rollout_id::text,
        jsonb_build_object('device', new.device_id::text, 'status', new.state));
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_agent_upgrades after insert or update on agent_rollout_devices
    for each row execute function tern_live_agent_upgrades()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("agent_rollout_devices").execute();
  await sql`drop function tern_live_agent_upgrades()`.execute(db);
  await db.schema.dropTable("agent_rollouts").execute();
  await db.schema.dropTable("agent_packages").execute();
  await db.schema.dropTable("agent_signing_keys").execute();
}
