/**
 * A job names the group of the request that queued it (issue 14): `jobs.group_id`
 * instead of the `job_groups` table. A fan-out of 10,000 jobs wrote its group
 * as 10,000 more rows after its answer was ready (a 370 KB id list sent back
 * to the database, two foreign-key checks per row: about 140 ms of a 1 s
 * answer); now the INSERT that queues the jobs writes the request's group id
 * with them. `GET /api/jobs?group=<id>` reads the partial index. Existing
 * groups are carried over (a job was only ever in one group: the request
 * that created it).
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column group_id uuid`.execute(db);
  await sql`update jobs set group_id = g.id from job_groups g where g.job_id = jobs.id`.execute(db);
  await sql`create index jobs_group_idx on jobs (group_id) where group_id is not null`.execute(db);
  await sql`drop table job_groups`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table job_groups (
      id uuid not null,
      organization_id uuid not null references organizations(id) on delete cascade,
      job_id uuid not null references jobs(id) on delete cascade,
      primary key (id, job_id)
    )`.execute(db);
  await sql`create index job_groups_job on job_groups (job_id)`.execute(db);
  await sql`insert into job_groups (id, organization_id, job_id)
    select group_id, organization_id, id from jobs where group_id is not null`.execute(db);
  await sql`drop index jobs_group_idx`.execute(db);
  await sql`alter table jobs drop column group_id`.execute(db);
}
