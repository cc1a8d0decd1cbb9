/**
 * The device gateway and job engine: which apply a running job went out with,
 * the live link of each device (session, owning instance), its last reported
 * state, tunnel samples (time series with retention) and the latest value per
 * tunnel end, server instances with heartbeats, periodic duties, and the
 * triggers that wake the dispatcher of whichever instance holds a device's
 * link (LISTEN/NOTIFY) without any caller having to remember it.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = sql`now()`;

  // The apply a running job went out with and the hash that apply carried:
  // a late result or report of that hash completes (or corrects) exactly those jobs.
  await db.schema.alterTable("jobs").addColumn("apply_id", "text").execute();
  await db.schema.alterTable("jobs").addColumn("sent_hash", "text").execute();
  await db.schema
    .createIndex("jobs_apply_idx")
    .on("jobs")
    .column("apply_id")
    .where(sql.ref("apply_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("jobs_running_started_idx")
    .on("jobs")
    .column("started_at")
    .where(sql.ref("state"), "=", "running")
    .execute();

  await db.schema
    .createTable("gateway_instances")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("hostname", "text", (c) => c.notNull())
    .addColumn("pid", "integer", (c) => c.notNull())
    .addColumn("started_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("heartbeat_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();

  // One row per connected device: which instance holds its websocket.
  await db.schema
    .createTable("device_sessions")
    .addColumn("device_id", "uuid", (c) => c.primaryKey().references("devices.id").onDelete("cascade"))
    .addColumn("session_id", "uuid", (c) => c.notNull())
    .addColumn("instance_id", "uuid", (c) => c.notNull())
    .addColumn("remote_address", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("connected_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex("device_sessions_instance_idx").on("device_sessions").column("instance_id").execute();

  // The last status of each device, and the public-address history its rate limit is judged on.
  await db.schema
    .createTable("device_state")
    .addColumn("device_id", "uuid", (c) => c.primaryKey().references("devices.id").onDelete("cascade"))
    .addColumn("organization_id", "uuid", (c) => c.notNull().references("organizations.id").onDelete("cascade"))
    // Null until the first status (the row may exist earlier for the public-address history).
    .addColumn("reported_at", "timestamptz(3)")
    .addColumn("received_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .addColumn("applied_hash", "text")
    .addColumn("applying", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("interfaces", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("bgp", "jsonb")
    .addColumn("vrrp", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("health", "jsonb")
    .addColumn("public_addresses", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
  await db.schema.createIndex("device_state_org_idx").on("device_state").column("organization_id").execute();

  // Samples are written in batches and read by tunnel and time. No foreign key:
  // the check would cost every insert, tunnel ids are never reused, and the
  // retention duty removes samples of deleted tunnels with the rest.
  await db.schema
    .createTable("tunnel_samples")
    .addColumn("tunnel_id", "uuid", (c) => c.notNull())
    .addColumn("device_id", "uuid", (c) => c.notNull())
    .addColumn("side", "char(1)", (c) => c.notNull())
    .addColumn("at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("up", "boolean", (c) => c.notNull())
    .addColumn("loss", "real", (c) => c.notNull())
    .addColumn("rtt", "real", (c) => c.notNull())
    .addColumn("jitter", "real", (c) => c.notNull())
    .addColumn("samples", "integer", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tunnel_samples_tunnel_at_idx").on("tunnel_samples").columns(["tunnel_id", "at"]).execute();
  // Rows arrive in time order, so a BRIN index finds the expired ones for a tiny fraction of a b-tree's size.
  await db.schema.createIndex("tunnel_samples_at_brin").on("tunnel_samples").using("brin").column("at").execute();

  await db.schema
    .createTable("tunnel_latest")
    .addColumn("tunnel_id", "uuid", (c) => c.notNull())
    .addColumn("side", "char(1)", (c) => c.notNull())
    .addColumn("device_id", "uuid", (c) => c.notNull())
    .addColumn("at", "timestamptz(3)", (c) => c.notNull())
    .addColumn("up", "boolean", (c) => c.notNull())
    .addColumn("loss", "real", (c) => c.notNull())
    .addColumn("rtt", "real", (c) => c.notNull())
    .addColumn("jitter", "real", (c) => c.notNull())
    .addColumn("samples", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("tunnel_latest_pkey", ["tunnel_id", "side"])
    .execute();

  // Periodic duties: claimed once per interval by one instance.
  await db.schema
    .createTable("gateway_duties")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("last_run_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`'-infinity'`))
    .addColumn("runs", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("last_instance", "uuid")
    .execute();

  // Answers to requests routed to another instance that are too big for a NOTIFY payload.
  await db.schema
    .createTable("gateway_replies")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("payload", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(now))
    .execute();

  // Whoever queues jobs (any service, any instance) wakes the device's dispatcher after commit.
  await sql`create function tern_jobs_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tern_jobs', d) from (select distinct device_id::text as d from new_rows) s;
      return null;
    end $$`.execute(db);
  await sql`create trigger jobs_notify after insert on jobs referencing new table as new_rows
    for each statement execute function tern_jobs_notify()`.execute(db);

  // A deleted device, a withdrawn approval or a new token ends the device's link wherever it is.
  await sql`create function tern_devices_notify() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('tern_device', json_build_object('id', old.id, 'op', 'deleted')::text);
      elsif old.is_approved and not new.is_approved then
        perform pg_notify('tern_device', json_build_object('id', new.id, 'op', 'unapproved')::text);
      elsif old.device_token_hash <> new.device_token_hash then
        perform pg_notify('tern_device', json_build_object('id', new.id, 'op', 'token')::text);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger devices_notify after delete or update of is_approved, device_token_hash on devices
    for each row execute function tern_devices_notify()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists devices_notify on devices`.execute(db);
  await sql`drop function if exists tern_devices_notify()`.execute(db);
  await sql`drop trigger if exists jobs_notify on jobs`.execute(db);
  await sql`drop function if exists tern_jobs_notify()`.execute(db);
  for (const table of [
    "gateway_replies",
    "gateway_duties",
    "tunnel_latest",
    "tunnel_samples",
    "device_state",
    "device_sessions",
    "gateway_instances",
  ]) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.dropIndex("jobs_running_started_idx").execute();
  await db.schema.dropIndex("jobs_apply_idx").execute();
  await db.schema.alterTable("jobs").dropColumn("sent_hash").execute();
  await db.schema.alterTable("jobs").dropColumn("apply_id").execute();
}
