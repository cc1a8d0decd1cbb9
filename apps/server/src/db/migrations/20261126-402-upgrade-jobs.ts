/**
 * Issue 19, agent upgrades as jobs (docs/upgrades.md, "Jobs"): each device's upgrade in a rollout gets a job
 * of type `upgrade` when the scheduler starts it; `agent_rollout_devices.job_id` names that job (null while
 * pending or skipped, and once the job was deleted through /api/jobs after it finished). The index serves the
 * foreign key when jobs are deleted and the look-up of a job's rollout. A rollout's own state change (pause,
 * resume, cancel, complete) is a live `upgrade` event too, so the console follows it without polling.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table agent_rollout_devices add column job_id uuid references jobs(id) on delete set null`.execute(db);
  await sql`create index agent_rollout_devices_job on agent_rollout_devices (job_id) where job_id is not null`.execute(db);
  await sql`create function tern_live_agent_rollouts() returns trigger language plpgsql as $$
    begin
      if old.state is not distinct from new.state then return null; end if;
      perform tern_live_event(new.organization_id, 'upgrade', 'updated', new.id::text,
        jsonb_build_object('status', new.state));
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_live_agent_rollouts after update on agent_rollouts
    for each row execute function tern_live_agent_rollouts()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_live_agent_rollouts on agent_rollouts`.execute(db);
  await sql`drop function tern_live_agent_rollouts()`.execute(db);
  await sql`drop index agent_rollout_devices_job`.execute(db);
  await sql`alter table agent_rollout_devices drop column job_id`.execute(db);
}
