/**
 * The console's device and tunnel events, one per statement and organization
 * instead of one per row (issue 14), as job events already are (20261126-702). The row
 * trigger of 20261125-701-console wrote a `live_events` row and sent a
 * `tern_live` NOTIFY for every device whose connection, approval or name
 * changed, and ran for every row of every UPDATE of `devices` to find out:
 * a fleet of 10,000 coming online (hellos recorded a batch per statement)
 * made 10,000 events, and as many again when it dropped, each received and
 * parsed by every instance. The console reads only an event's kind (it
 * refetches), so a statement now announces its devices once per organization:
 * the device's own id and summary when it changed one device (as before), `*`
 * with a `count` when it changed several (a batch of hellos or link ends, a
 * bulk approval). Tunnels likewise (created, deleted, description or
 * notification settings changed): creating 1,000 tunnels in one request made
 * 1,000 events.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_live_devices on devices`.execute(db);
  await sql`drop function tern_live_devices()`.execute(db);

  // One organization's share of a statement: its one device with the summary, or how many.
  await sql`create function tern_live_device_group(org uuid, action text, n integer, one_id uuid, one_summary jsonb)
    returns void language plpgsql as $$
    begin
      if n = 1 then
        perform tern_live_event(org, 'device', action, one_id::text, one_summary);
      else
        perform tern_live_event(org, 'device', action, '*', jsonb_build_object('count', n));
      end if;
    end $$`.execute(db);

  // Each organization's first row (by id) with the number of rows: the summary is built only for that row.
  // Transition tables (changed_old, changed_new) exist only in the triggers that declare them: each branch reads
  // only its own trigger's.
  await sql`create function tern_live_devices_batch() returns trigger language plpgsql as $$
    declare g record;
    begin
      if tg_op = 'INSERT' then
        for g in select * from (select r.organization_id, r.id, r.connection, r.is_approved, r.name,
                   count(*) over (partition by r.organization_id)::integer as n,
                   row_number() over (partition by r.organization_id order by r.id) as rn
                   from changed_new r) x where x.rn = 1 order by x.organization_id loop
          perform tern_live_device_group(g.organization_id, 'created', g.n, g.id, jsonb_build_object(
            'isConnected', g.connection = 'connected', 'isApproved', g.is_approved, 'name', left(g.name, 200)));
        end loop;
      elsif tg_op = 'DELETE' then
        for g in select * from (select r.organization_id, r.id, r.connection, r.is_approved, r.name,
                   count(*) over (partition by r.organization_id)::integer as n,
                   row_number() over (partition by r.organization_id order by r.id) as rn
                   from changed_old r) x where x.rn = 1 order by x.organization_id loop
          perform tern_live_device_group(g.organization_id, 'deleted', g.n, g.id, jsonb_build_object(
            'isConnected', g.connection = 'connected', 'isApproved', g.is_approved, 'name', left(g.name, 200)));
        end loop;
      else
        -- Only rows whose connection, approval or name changed are announced, as the row trigger did.
        for g in select * from (select r.organization_id, r.id, r.connection, r.is_approved, r.name,
                   count(*) over (partition by r.organization_id)::integer as n,
                   row_number() over (partition by r.organization_id order by r.id) as rn
                   from changed_new r join changed_old o on o.id = r.id
                   where o.connection is distinct from r.connection or o.is_approved is distinct from r.is_approved
                      or o.name is distinct from r.name) x where x.rn = 1 order by x.organization_id loop
          perform tern_live_device_group(g.organization_id, 'updated', g.n, g.id, jsonb_build_object(
            'isConnected', g.connection = 'connected', 'isApproved', g.is_approved, 'name', left(g.name, 200)));
        end loop;
      end if;
      return null;
    end $$`.execute(db);

  // A trigger with transition tables serves one event only: three of them (devices, then tunnels).
  await sql`create trigger tern_live_devices_insert after insert on devices
    referencing new table as changed_new
    for each statement execute function tern_live_devices_batch()`.execute(db);
  await sql`create trigger tern_live_devices_update after update on devices
    referencing old table as changed_old new table as changed_new
    for each statement execute function tern_live_devices_batch()`.execute(db);
  await sql`create trigger tern_live_devices_delete after delete on devices
    referencing old table as changed_old
    for each statement execute function tern_live_devices_batch()`.execute(db);

  // Tunnels likewise: creating 1,000 tunnels in one request was 1,000 events. An update is announced when its
  // description or notification settings changed, as the row trigger did (status events: tunnel-status-events.ts).
  await sql`drop trigger tern_live_tunnels on tunnels`.execute(db);
  await sql`drop function tern_live_tunnels()`.execute(db);
  await sql`create function tern_live_tunnel_group(org uuid, action text, n integer, one_id uuid) returns void
    language plpgsql as $$
    begin
      perform tern_live_event(org, 'tunnel', action, case when n = 1 then one_id::text else '*' end,
        case when n = 1 then null else jsonb_build_object('count', n) end);
    end $$`.execute(db);
  await sql`create function tern_live_tunnels_batch() returns trigger language plpgsql as $$
    declare g record;
    begin
      if tg_op = 'INSERT' then
        for g in select organization_id, count(*)::integer as n, min(id::text)::uuid as one_id
                   from changed_new group by organization_id order by organization_id loop
          perform tern_live_tunnel_group(g.organization_id, 'created', g.n, g.one_id);
        end loop;
      elsif tg_op = 'DELETE' then
        for g in select organization_id, count(*)::integer as n, min(id::text)::uuid as one_id
                   from changed_old group by organization_id order by organization_id loop
          perform tern_live_tunnel_group(g.organization_id, 'deleted', g.n, g.one_id);
        end loop;
      else
        for g in select r.organization_id, count(*)::integer as n, min(r.id::text)::uuid as one_id
                   from changed_new r join changed_old o on o.id = r.id
                  where o.description is distinct from r.description or o.notifications is distinct from r.notifications
                  group by r.organization_id order by r.organization_id loop
          perform tern_live_tunnel_group(g.organization_id, 'updated', g.n, g.one_id);
        end loop;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_tunnels_insert after insert on tunnels
    referencing new table as changed_new
    for each statement execute function tern_live_tunnels_batch()`.execute(db);
  await sql`create trigger tern_live_tunnels_update after update on tunnels
    referencing old table as changed_old new table as changed_new
    for each statement execute function tern_live_tunnels_batch()`.execute(db);
  await sql`create trigger tern_live_tunnels_delete after delete on tunnels
    referencing old table as changed_old
    for each statement execute function tern_live_tunnels_batch()`.execute(db);
}
