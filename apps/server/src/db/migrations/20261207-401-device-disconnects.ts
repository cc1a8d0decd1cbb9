/**
 * The devices whose link has ended, kept apart from `devices` (issue 14): the
 * device-connection alerts' check (notify/checks.ts, every 5 s) looked for
 * disconnected devices past their grace period by reading every device's row,
 * 5,083 buffers and 49–74 ms at 10,000 devices with the whole fleet
 * connected. An index on `devices.connection` or `disconnected_at` would have
 * made every connect and disconnect a non-HOT update writing all of the
 * table's indexes. Instead a row trigger, fired only when a device's
 * connection or `disconnected_at` changes (its WHEN clause is judged without
 * running it), keeps one row here per disconnected device with its link's end;
 * the check reads these rows and joins their devices. Its writes follow the
 * device row's lock, taken by the statement that fires it, and nothing else
 * locks these rows, so it adds no lock order.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table device_disconnects (
    device_id uuid primary key references devices (id) on delete cascade,
    disconnected_at timestamptz not null
  )`.execute(db);
  await sql`insert into device_disconnects (device_id, disconnected_at)
    select id, disconnected_at from devices where connection = 'disconnected' and disconnected_at is not null`.execute(db);
  await sql`create function tern_device_disconnects() returns trigger language plpgsql as $$
    begin
      if new.connection = 'disconnected' and new.disconnected_at is not null then
        insert into device_disconnects (device_id, disconnected_at) values (new.id, new.disconnected_at)
          on conflict (device_id) do update set disconnected_at = excluded.disconnected_at;
      elsif tg_op = 'UPDATE' then
        delete from device_disconnects where device_id = new.id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_device_disconnects_insert after insert on devices for each row
    when (new.connection = 'disconnected') execute function tern_device_disconnects()`.execute(db);
  await sql`create trigger tern_device_disconnects_update after update of connection, disconnected_at on devices for each row
    when (old.connection is distinct from new.connection or old.disconnected_at is distinct from new.disconnected_at)
    execute function tern_device_disconnects()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_device_disconnects_update on devices`.execute(db);
  await sql`drop trigger tern_device_disconnects_insert on devices`.execute(db);
  await sql`drop function tern_device_disconnects()`.execute(db);
  await sql`drop table device_disconnects`.execute(db);
}
