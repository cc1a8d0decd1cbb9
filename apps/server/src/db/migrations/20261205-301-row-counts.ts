/**
 * Each organization's number of devices, tunnels, jobs and notifications,
 * kept beside the rows (issue 14). An unfiltered list answers its total
 * (`records-total`) from here instead of counting: counting was most of what
 * the jobs, tunnels and notifications lists cost PostgreSQL at 10,000
 * devices (1.3 to 2.1 ms a request for 12,500 to 20,000 index entries, in
 * every request), and it grows with the fleet.
 *
 * The number is the sum of `row_counts.delta` for the organization and table.
 * A statement-level trigger on each table adds one row per organization a
 * statement inserted or deleted rows of (+n or -n), in the statement's own
 * transaction: a reader's snapshot sums exactly the rows it sees, as
 * `count(*)` would, whatever commits around it. No counter row is updated in
 * place, so concurrent writers never wait for each other here. A duty folds
 * each organization's rows into one now and then (db/row-counts.ts).
 *
 * Rows never move between organizations (nothing sets `organization_id` on
 * these tables): a row trigger refuses it, so the counts cannot drift that way.
 * An organization's deletion removes its counts with it (foreign key); the
 * deletes it cascades to count nothing for an organization that is gone.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

/** The tables counted; their `row_counts.resource` is the table's name. */
const COUNTED = ["devices", "tunnels", "jobs", "notifications"] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table row_counts (
    organization_id uuid not null references organizations(id) on delete cascade,
    resource text not null,
    delta bigint not null
  )`.execute(db);
  await sql`create index row_counts_org_resource_idx on row_counts (organization_id, resource)`.execute(db);

  // Each branch reads only its own trigger's transition table (counted_new on insert, counted_old on delete).
  await sql`create function tern_row_counts() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into row_counts (organization_id, resource, delta)
          select c.organization_id, tg_table_name, count(*) from counted_new c
          where exists (select 1 from organizations o where o.id = c.organization_id)
          group by c.organization_id;
      else
        insert into row_counts (organization_id, resource, delta)
          select c.organization_id, tg_table_name, -count(*) from counted_old c
          where exists (select 1 from organizations o where o.id = c.organization_id)
          group by c.organization_id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create function tern_row_counts_fixed_org() returns trigger language plpgsql as $$
    begin
      if new.organization_id is distinct from old.organization_id then
        raise exception '%: a row does not move to another organization', tg_table_name
          using errcode = 'check_violation';
      end if;
      return new;
    end $$`.execute(db);

  for (const table of COUNTED) {
    await sql
      .raw(`create trigger tern_row_counts_insert after insert on ${table} referencing new table as counted_new
        for each statement execute function tern_row_counts()`)
      .execute(db);
    await sql
      .raw(`create trigger tern_row_counts_delete after delete on ${table} referencing old table as counted_old
        for each statement execute function tern_row_counts()`)
      .execute(db);
    await sql
      .raw(`create trigger tern_row_counts_fixed_org before update of organization_id on ${table}
        for each row execute function tern_row_counts_fixed_org()`)
      .execute(db);
    await sql
      .raw(`insert into row_counts (organization_id, resource, delta)
        select organization_id, '${table}', count(*) from ${table} group by organization_id`)
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of COUNTED)
    for (const trigger of ["insert", "delete", "fixed_org"])
      await sql.raw(`drop trigger tern_row_counts_${trigger} on ${table}`).execute(db);
  await sql`drop function tern_row_counts_fixed_org()`.execute(db);
  await sql`drop function tern_row_counts()`.execute(db);
  await sql`drop table row_counts`.execute(db);
}
