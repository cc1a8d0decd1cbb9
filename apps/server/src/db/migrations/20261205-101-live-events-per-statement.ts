/**
 * The console's device and tunnel events, one per statement and organization
 * instead of one per row (issue 14), as job events already are (20261126-702).
 * The row trigger of 20261125-701-console wrote a `live_events` row and sent a
 * `tern_live` NOTIFY for every device whose connection, approval or name
 * changed, and ran for every row of every UPDATE of `devices` to find out: a
 * fleet of 10,000 coming online (hellos recorded a batch per statement) made
 * 10,000 events, and as many again when it dropped, each received and parsed
 * by every instance. The console reads only an event's kind (it refetches), so
 * a statement now announces its devices once per organization: the device's
 * own id and summary when it changed one device (as before), `*` with a
 * `count` when it changed several (a batch of hellos or link ends, a bulk
 * approval). Tunnels likewise (created, deleted, description or notification
 * settings changed): creating 1,000 tunnels in one request made 1,000 events.
 *
 * An UPDATE's changed rows are found by aggregating the old and new rows of
 * each id (`union all`, `group by id`), never by joining the two transition
 * tables: PL/pgSQL keeps the plan it made for a query at its first run, and a
 * join planned for a one-row statement (a nested loop) re-read the 10,000
 * rows of a fan-out's UPDATE once per row: 133 s, measured. The job trigger
 * of 20261126-702 joined them too (its batches of up to 500 jobs paid 250,000
 * row comparisons each); it is replaced the same way.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

/**
 * `tern_live_<table>_batch()` after every statement that inserts, updates or deletes rows of `table`: a
 * trigger with transition tables serves one event only, so three of them.
 */
async function statementTriggers(db: Kysely<unknown>, table: "devices" | "tunnels"): Promise<void> {
  const transitions = {
    insert: "new table as changed_new",
    update: "old table as changed_old new table as changed_new",
    delete: "old table as changed_old",
  };
  for (const [event, transition] of Object.entries(transitions))
    await sql
      .raw(`create trigger tern_live_${table}_${event} after ${event} on ${table} referencing ${transition}
        for each statement execute function tern_live_${table}_batch()`)
      .execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_live_devices on devices`.execute(db);
  await sql`drop function tern_live_devices()`.execute(db);

  // One organization's share of a statement: its one device with its summary, or how many.
  await sql`create function tern_live_device_group(org uuid, action text, n integer, one_id uuid, connected boolean,
      approved boolean, name text) returns void language plpgsql as $$
    begin
      if n = 1 then
        perform tern_live_event(org, 'device', action, one_id::text,
          jsonb_build_object('isConnected', connected, 'isApproved', approved, 'name', left(name, 200)));
      else
        perform tern_live_event(org, 'device', action, '*', jsonb_build_object('count', n));
      end if;
    end $$`.execute(db);

  // Per organization: how many rows, and (read only when there is one) that row's id and summary. Transition
  // tables (changed_old, changed_new) exist only in the triggers that declare them: each branch reads only its
  // own trigger's.
  await sql`create function tern_live_devices_batch() returns trigger language plpgsql as $$
    declare g record;
    begin
      if tg_op = 'INSERT' then
        for g in select organization_id, count(*)::integer as n, min(id::text)::uuid as one_id,
                   bool_or(connection = 'connected') as connected, bool_or(is_approved) as approved, min(name) as name
                   from changed_new group by organization_id order by organization_id loop
          perform tern_live_device_group(g.organization_id, 'created', g.n, g.one_id, g.connected, g.approved, g.name);
        end loop;
      elsif tg_op = 'DELETE' then
        for g in select organization_id, count(*)::integer as n, min(id::text)::uuid as one_id,
                   bool_or(connection = 'connected') as connected, bool_or(is_approved) as approved, min(name) as name
                   from changed_old group by organization_id order by organization_id loop
          perform tern_live_device_group(g.organization_id, 'deleted', g.n, g.one_id, g.connected, g.approved, g.name);
        end loop;
      else
        -- The rows whose connection, approval or name changed, with their new values.
        for g in select organization_id, count(*)::integer as n, min(id::text)::uuid as one_id,
                   bool_or(connected) as connected, bool_or(approved) as approved, min(name) as name
                 from (select id, organization_id,
                         bool_or(is_new and connection = 'connected') as connected,
                         bool_or(is_new and is_approved) as approved,
                         max(case when is_new then name end) as name
                       from (select id, organization_id, connection, is_approved, name, true as is_new from changed_new
                             union all
                             select id, organization_id, connection, is_approved, name, false from changed_old) x
                       group by id, organization_id
                       having count(distinct (connection, is_approved, name)) > 1) c
                 group by organization_id order by organization_id loop
          perform tern_live_device_group(g.organization_id, 'updated', g.n, g.one_id, g.connected, g.approved, g.name);
        end loop;
      end if;
      return null;
    end $$`.execute(db);

  await statementTriggers(db, "devices");

  // Tunnels likewise (status events are not these: services/live-events/tunnel-status-events.ts).
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
        -- The rows whose description or notification settings changed.
        for g in select organization_id, count(*)::integer as n, min(id::text)::uuid as one_id
                 from (select id, organization_id
                       from (select id, organization_id, description, notifications from changed_new
                             union all
                             select id, organization_id, description, notifications from changed_old) x
                       group by id, organization_id
                       having count(distinct (description, notifications)) > 1) c
                 group by organization_id order by organization_id loop
          perform tern_live_tunnel_group(g.organization_id, 'updated', g.n, g.one_id);
        end loop;
      end if;
      return null;
    end $$`.execute(db);
  await statementTriggers(db, "tunnels");

  // Jobs: the same events as 20261126-702, the moved jobs found without a join.
  await sql`create or replace function tern_live_jobs_batch() returns trigger language plpgsql as $$
    declare g record;
    begin
      if tg_op = 'INSERT' then
        for g in select organization_id, state::text as state, count(*)::integer as n, min(id::text) as one_id
                   from changed_new group by organization_id, state order by organization_id, state loop
          perform tern_live_job_group(g.organization_id, 'created', g.state, g.n, g.one_id);
        end loop;
      elsif tg_op = 'DELETE' then
        for g in select organization_id, state::text as state, count(*)::integer as n, min(id::text) as one_id
                   from changed_old group by organization_id, state order by organization_id, state loop
          perform tern_live_job_group(g.organization_id, 'deleted', g.state, g.n, g.one_id);
        end loop;
      else
        for g in select organization_id, state, count(*)::integer as n, min(id::text) as one_id
                 from (select id, organization_id, max(case when is_new then state end) as state
                       from (select id, organization_id, state::text as state, true as is_new from changed_new
                             union all
                             select id, organization_id, state::text, false from changed_old) x
                       group by id, organization_id
                       having count(distinct state) > 1) c
                 group by organization_id, state order by organization_id, state loop
          perform tern_live_job_group(g.organization_id, 'updated', g.state, g.n, g.one_id);
        end loop;
      end if;
      return null;
    end $$`.execute(db);
}
