/**
 * Job fan-out answered before compiling (issue 14, docs/gateway.md "Fan-out"):
 * - `devices.desired_stale`: the device's desired config no longer reflects
 *   its settings (a fan-out changed them and queued its job); the recompiler
 *   compiles it after the change has committed and answered. Durable, so a
 *   server that dies after answering loses nothing: any instance recompiles
 *   what is still marked (at start and periodically). Indexed partially: the
 *   set is empty nearly always.
 * - `jobs.target_hash` may be null: a job queued by such a fan-out, whose
 *   target is known once its device is recompiled (in the same transaction
 *   that clears `desired_stale`). Such a job is never settled nor sent.
 * - `tern_jobs_notify` wakes dispatchers only for jobs with a target (the
 *   recompiler notifies when it fills them in).
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addColumn("desired_stale", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`create index devices_desired_stale_idx on devices (id) where desired_stale`.execute(db);
  await sql`alter table jobs alter column target_hash drop not null`.execute(db);
  await sql`create or replace function tern_jobs_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tern_jobs', d) from (select distinct device_id::text as d from new_rows where target_hash is not null) s;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace function tern_jobs_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tern_jobs', d) from (select distinct device_id::text as d from new_rows) s;
      return null;
    end $$`.execute(db);
  await sql`delete from jobs where target_hash is null`.execute(db);
  await sql`alter table jobs alter column target_hash set not null`.execute(db);
  await sql`drop index if exists devices_desired_stale_idx`.execute(db);
  await db.schema.alterTable("devices").dropColumn("desired_stale").execute();
}
