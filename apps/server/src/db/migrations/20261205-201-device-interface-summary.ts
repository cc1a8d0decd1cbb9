/**
 * A device's interfaces as the devices summary page shows them, stored beside
 * `interfaces` (issue 14). `GET /api/devices?response=summary` is built as
 * JSON by the database (services/devices/summary-json.ts), and mapping each
 * row's interfaces there (`jsonb_array_elements`, a `json_build_object` per
 * interface, `json_agg`) took 1.9 of the 2.7 ms a page of 100 cost
 * PostgreSQL (pgbench, 10,000 devices; the page without its total). A page is
 * read far more often than a device's interfaces change, so the mapping now
 * runs when they are written: a row trigger on insert and on every UPDATE
 * that sets `interfaces` (whichever path writes them: the API, registration,
 * the address trackers) fills `interfaces_summary`, a `json` column, whose
 * text the page embeds as is. A backup carries the column with its rows (a
 * backup older than this migration gets it filled when the migration runs).
 * Same text as the query made before: the same expression, in
 * `tern_interfaces_summary`.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  // `isPublicAddressRateLimited` shows false when it is unset or null (rows written before it existed).
  await sql`create function tern_interfaces_summary(interfaces jsonb) returns json language sql immutable parallel safe as $$
    select coalesce(json_agg(json_build_object(
        'id', e->'id', 'name', e->'name', 'type', e->'type', 'IPv4', e->'IPv4', 'IPv4Mask', e->'IPv4Mask',
        'isPublicAddressRateLimited',
          case when jsonb_typeof(e->'isPublicAddressRateLimited') = 'boolean' then e->'isPublicAddressRateLimited'
          else 'false'::jsonb end) order by n), '[]'::json)
      from jsonb_array_elements(interfaces) with ordinality as x(e, n)
  $$`.execute(db);
  await sql`alter table devices add column interfaces_summary json not null default '[]'`.execute(db);
  await sql`update devices set interfaces_summary = tern_interfaces_summary(interfaces)`.execute(db);
  await sql`create function tern_devices_interfaces_summary() returns trigger language plpgsql as $$
    begin
      new.interfaces_summary := tern_interfaces_summary(new.interfaces);
      return new;
    end $$`.execute(db);
  await sql`create trigger tern_devices_interfaces_summary before insert or update of interfaces on devices
    for each row execute function tern_devices_interfaces_summary()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_devices_interfaces_summary on devices`.execute(db);
  await sql`drop function tern_devices_interfaces_summary()`.execute(db);
  await sql`alter table devices drop column interfaces_summary`.execute(db);
  await sql`drop function tern_interfaces_summary(jsonb)`.execute(db);
}
