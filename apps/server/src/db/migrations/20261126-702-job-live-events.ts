/**
 * The console's job events, one per statement instead of one per row
 * (issue 14). The row trigger of 20261125-701-console wrote a `live_events`
 * row and sent a `tern_live` NOTIFY for every job created, started and
 * finished: a 10,000-device fan-out made 30,000 of them, each received and
 * parsed by every instance, while the jobs themselves are written a batch
 * per statement (one INSERT for a fan-out, one UPDATE per dispatch or result
 * group commit). The console reads only an event's kind (it refetches the
 * job queries), so a statement now announces its jobs once per organization
 * and new state: the job's own id and status when it touched one job (as
 * before), `*` with the status and a `count` when it touched several.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_live_jobs on jobs`.execute(db);
  await sql`drop function tern_live_jobs()`.execute(db);

  // One event per (organization, state) group of the statement's rows, in a stable order.
  await sql`create function tern_live_job_group(org uuid, action text, state text, n integer, one_id text) returns void
    language plpgsql as $$
    begin
      if n = 1 then
        perform tern_live_event(org, 'job', action, one_id, jsonb_build_object('status', state));
      else
        perform tern_live_event(org, 'job', action, '*', jsonb_build_object('status', state, 'count', n));
      end if;
    end $$`.execute(db);

  // Transition tables (`changed_old`, `changed_new`) exist only in the triggers that declare them: each branch
  // reads only its own trigger's (plpgsql plans a statement when it first runs it).
  await sql`create function tern_live_jobs_batch() returns trigger language plpgsql as $$
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
        for g in select n.organization_id, n.state::text as state, count(*)::integer as n, min(n.id::text) as one_id
                   from changed_new n join changed_old o on o.id = n.id
                  where o.state is distinct from n.state
                  group by n.organization_id, n.state order by n.organization_id, n.state loop
          perform tern_live_job_group(g.organization_id, 'updated', g.state, g.n, g.one_id);
        end loop;
      end if;
      return null;
    end $$`.execute(db);

  // A trigger with transition tables serves one event only: three of them.
  await sql`create trigger tern_live_jobs_insert after insert on jobs
    referencing new table as changed_new
    for each statement execute function tern_live_jobs_batch()`.execute(db);
  await sql`create trigger tern_live_jobs_update after update on jobs
    referencing old table as changed_old new table as changed_new
    for each statement execute function tern_live_jobs_batch()`.execute(db);
  await sql`create trigger tern_live_jobs_delete after delete on jobs
    referencing old table as changed_old
    for each statement execute function tern_live_jobs_batch()`.execute(db);
}
