/**
 * The web console: live events (a short-lived journal that database triggers
 * fill whenever a device, tunnel, job or notification changes, announced on
 * the `tern_live` NOTIFY channel so every instance's event stream hears it)
 * and the installation's branding.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // Kept for a few minutes only (Last-Event-ID replay); pruned by every instance's live-event hub.
  await db.schema
    .createTable("live_events")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull())
    .addColumn("event", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("live_events_org_idx").on("live_events").columns(["organization_id", "id"]).execute();
  await db.schema.createIndex("live_events_created_idx").on("live_events").column("created_at").execute();

  // One event: journal row + NOTIFY (sent at commit; the payload stays far below NOTIFY's 8000 bytes: strings are cut).
  await sql`create function tern_live_event(org uuid, kind text, action text, rid text, data jsonb) returns void
    language plpgsql as $$
    declare
      ev jsonb := jsonb_build_object('kind', kind, 'action', action, 'id', rid,
        'at', to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
      eid bigint;
    begin
      if data is not null then ev := ev || jsonb_build_object('data', data); end if;
      insert into live_events (organization_id, event) values (org, ev) returning id into eid;
      perform pg_notify('tern_live', jsonb_build_object('id', eid, 'org', org, 'event', ev)::text);
    end $$`.execute(db);

  await sql`create function tern_live_devices() returns trigger language plpgsql as $$
    declare r record;
    begin
      if tg_op = 'DELETE' then r := old; else r := new; end if;
      if tg_op = 'UPDATE' and old.connection is not distinct from new.connection
         and old.is_approved is not distinct from new.is_approved and old.name is not distinct from new.name then
        return null;
      end if;
      perform tern_live_event(r.organization_id, 'device',
        case tg_op when 'INSERT' then 'created' when 'DELETE' then 'deleted' else 'updated' end, r.id::text,
        jsonb_build_object('isConnected', r.connection = 'connected', 'isApproved', r.is_approved, 'name', left(r.name, 200)));
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_devices after insert or update or delete on devices
    for each row execute function tern_live_devices()`.execute(db);

  await sql`create function tern_live_tunnels() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform tern_live_event(old.organization_id, 'tunnel', 'deleted', old.id::text, null);
      elsif tg_op = 'INSERT' then
        perform tern_live_event(new.organization_id, 'tunnel', 'created', new.id::text, null);
      elsif old.description is distinct from new.description or old.notifications is distinct from new.notifications then
        perform tern_live_event(new.organization_id, 'tunnel', 'updated', new.id::text, null);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_tunnels after insert or update or delete on tunnels
    for each row execute function tern_live_tunnels()`.execute(db);

  await sql`create function tern_live_jobs() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform tern_live_event(old.organization_id, 'job', 'deleted', old.id::text, jsonb_build_object('status', old.state));
      elsif tg_op = 'INSERT' then
        perform tern_live_event(new.organization_id, 'job', 'created', new.id::text, jsonb_build_object('status', new.state));
      elsif old.state is distinct from new.state then
        perform tern_live_event(new.organization_id, 'job', 'updated', new.id::text, jsonb_build_object('status', new.state));
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_jobs after insert or update or delete on jobs
    for each row execute function tern_live_jobs()`.execute(db);

  await sql`create function tern_live_notifications() returns trigger language plpgsql as $$
    declare r record;
    begin
      if tg_op = 'DELETE' then r := old; else r := new; end if;
      if tg_op = 'UPDATE' and old.is_read is not distinct from new.is_read and old.resolved is not distinct from new.resolved
         and old.severity is not distinct from new.severity and old.count is not distinct from new.count then
        return null;
      end if;
      perform tern_live_event(r.organization_id, 'notification',
        case tg_op when 'INSERT' then 'created' when 'DELETE' then 'deleted' else 'updated' end, r.id::text,
        jsonb_build_object('severity', r.severity, 'title', left(r.title, 300),
          'status', case when r.is_read then 'read' else 'unread' end, 'resolved', r.resolved));
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_notifications after insert or update or delete on notifications
    for each row execute function tern_live_notifications()`.execute(db);

  // The installation's look (one row, id 1): product name, accent colour, optional logo.
  await db.schema
    .createTable("branding")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("product_name", "text")
    .addColumn("accent_color", "text")
    .addColumn("logo", "bytea")
    .addColumn("logo_type", "text")
    .addColumn("logo_version", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}
