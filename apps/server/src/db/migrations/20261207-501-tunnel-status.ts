/**
 * Tunnels' derived status stored and indexed (issue 14, docs/scale.md "Tunnels sorted or filtered by status"):
 * a page sorted or filtered by status derived every tunnel's status from four tables first, 75 ms alone and
 * 458 ms a call under load at 20,000 tunnels. `tunnel_status` holds each tunnel's status fields (and the
 * tunnel's own list columns) as the `tunnel-status` duty last derived them (services/tunnels/stored-status.ts),
 * one index per sort key.
 *
 * Exact at every read without a row lock on any writer's path: every statement that changes a fact of the
 * derivation appends a marker to `tunnel_status_marks` from a trigger (a device, or one tunnel), an insert
 * into a table with no unique key, which waits for nobody. The duty deletes the markers it sees, derives
 * their tunnels' status in the same transaction and writes it; a page reads the stored status of unmarked
 * tunnels and derives the marked ones. The facts and their triggers:
 * - `devices`: connection, last connect, the tunnels in its desired config (a row trigger, fired only when one
 *   changes: its WHEN clause is judged without running it);
 * - `jobs`: a device's config-job state (statement triggers on insert and delete, a fan-out inserts thousands
 *   at once; a row trigger when a job's state changes);
 * - `tunnel_latest`: an end's report (its first one, and whenever `up` flips; rows are deleted only after their
 *   tunnel, retention.ts). The report of a connected end that predates its device's last connect reads
 *   `unknown` and turns known at the next report without `up` flipping: the duty keeps such tunnels marked;
 * - `tunnels`: a new tunnel, a deleted one, and a change of the columns copied beside the status (the lists'
 *   keys: number, description, path label, ends, peer, creation). No foreign key ties a status row to
 *   its tunnel: the duty deletes it, so the duty's writes lock its own rows only (a cascade from a tunnel's
 *   delete would lock them in the deleting transaction's order, and the duty's key check the tunnels in its own).
 * Every existing tunnel starts marked: the duty derives them all at its first run.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

const SORT_KEYS = ["tunnel_status", "status", "is_pending", "a_reported", "b_reported"];
/** The tunnels' columns copied beside their status. */
const TUNNEL_COLUMNS = [
  "organization_id",
  "num",
  "description",
  "device_a",
  "interface_a",
  "device_b",
  "interface_b",
  "peer_id",
  "pathlabel_id",
  "created_at",
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // Each tunnel's columns that lists filter and sort on beside its status fields: a page reads one table, which
  // PostgreSQL merges with the marked tunnels' rows in index order (a join in its place was planned as a sort of
  // every row).
  await sql`create table tunnel_status (
    id uuid primary key,
    organization_id uuid not null,
    num integer not null,
    description text not null,
    device_a uuid not null,
    interface_a uuid not null,
    device_b uuid,
    interface_b uuid,
    peer_id uuid,
    pathlabel_id uuid,
    created_at timestamptz(3) not null,
    tunnel_status text not null,
    status text not null,
    is_pending boolean not null,
    a_reported text not null,
    b_reported text not null
  )`.execute(db);
  // In the lists' order (`asc nulls first`, the tiebreaker after), so a page walks an index, either way.
  for (const key of SORT_KEYS) {
    await sql`create index ${sql.id(`tunnel_status_${key}`)} on tunnel_status
      (organization_id, ${sql.id(key)} nulls first, id)`.execute(db);
  }
  await sql`create table tunnel_status_marks (
    organization_id uuid not null,
    device_id uuid,
    tunnel_id uuid
  )`.execute(db);
  await sql`create index tunnel_status_marks_org on tunnel_status_marks (organization_id)`.execute(db);
  await sql`insert into tunnel_status_marks (organization_id, tunnel_id) select organization_id, id from tunnels`.execute(db);

  await sql`create function tern_mark_device() returns trigger language plpgsql as $$
    begin
      insert into tunnel_status_marks (organization_id, device_id) values (new.organization_id, new.id);
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_tunnel_status_device after update of connection, last_connected_at, desired_tunnel_ids
    on devices for each row
    when (old.connection is distinct from new.connection or old.last_connected_at is distinct from new.last_connected_at
      or old.desired_tunnel_ids is distinct from new.desired_tunnel_ids)
    execute function tern_mark_device()`.execute(db);
  await sql`create function tern_mark_job_row() returns trigger language plpgsql as $$
    begin
      insert into tunnel_status_marks (organization_id, device_id) values (new.organization_id, new.device_id);
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_tunnel_status_job_state after update of state on jobs for each row
    when (old.state is distinct from new.state) execute function tern_mark_job_row()`.execute(db);
  await sql`create function tern_mark_jobs() returns trigger language plpgsql as $$
    begin
      insert into tunnel_status_marks (organization_id, device_id) select distinct organization_id, device_id from changed;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_tunnel_status_jobs_insert after insert on jobs referencing new table as changed
    for each statement execute function tern_mark_jobs()`.execute(db);
  await sql`create trigger tern_tunnel_status_jobs_delete after delete on jobs referencing old table as changed
    for each statement execute function tern_mark_jobs()`.execute(db);

  await sql`create function tern_mark_report() returns trigger language plpgsql as $$
    begin
      insert into tunnel_status_marks (organization_id, tunnel_id)
        select t.organization_id, t.id from tunnels t where t.id = new.tunnel_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_tunnel_status_report_insert after insert on tunnel_latest for each row
    execute function tern_mark_report()`.execute(db);
  await sql`create trigger tern_tunnel_status_report_update after update of up on tunnel_latest for each row
    when (old.up is distinct from new.up) execute function tern_mark_report()`.execute(db);

  await sql`create function tern_mark_tunnels() returns trigger language plpgsql as $$
    begin
      insert into tunnel_status_marks (organization_id, tunnel_id) select organization_id, id from changed;
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_tunnel_status_tunnels_insert after insert on tunnels referencing new table as changed
    for each statement execute function tern_mark_tunnels()`.execute(db);
  await sql`create trigger tern_tunnel_status_tunnels_delete after delete on tunnels referencing old table as changed
    for each statement execute function tern_mark_tunnels()`.execute(db);
  await sql`create function tern_mark_tunnel() returns trigger language plpgsql as $$
    begin
      insert into tunnel_status_marks (organization_id, tunnel_id) values (new.organization_id, new.id);
      return null;
    end $$`.execute(db);
  await sql`create trigger tern_tunnel_status_tunnel_update after update of ${sql.join(TUNNEL_COLUMNS.map((c) => sql.id(c)))}
    on tunnels for each row
    when ((${sql.join(TUNNEL_COLUMNS.map((c) => sql.id("old", c)))}) is distinct from (${sql.join(TUNNEL_COLUMNS.map((c) => sql.id("new", c)))}))
    execute function tern_mark_tunnel()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_tunnel_status_tunnel_update on tunnels`.execute(db);
  await sql`drop function tern_mark_tunnel()`.execute(db);
  await sql`drop trigger tern_tunnel_status_tunnels_delete on tunnels`.execute(db);
  await sql`drop trigger tern_tunnel_status_tunnels_insert on tunnels`.execute(db);
  await sql`drop function tern_mark_tunnels()`.execute(db);
  await sql`drop trigger tern_tunnel_status_report_update on tunnel_latest`.execute(db);
  await sql`drop trigger tern_tunnel_status_report_insert on tunnel_latest`.execute(db);
  await sql`drop function tern_mark_report()`.execute(db);
  await sql`drop trigger tern_tunnel_status_jobs_delete on jobs`.execute(db);
  await sql`drop trigger tern_tunnel_status_jobs_insert on jobs`.execute(db);
  await sql`drop function tern_mark_jobs()`.execute(db);
  await sql`drop trigger tern_tunnel_status_job_state on jobs`.execute(db);
  await sql`drop function tern_mark_job_row()`.execute(db);
  await sql`drop trigger tern_tunnel_status_device on devices`.execute(db);
  await sql`drop function tern_mark_device()`.execute(db);
  await sql`drop table tunnel_status_marks`.execute(db);
  await sql`drop table tunnel_status`.execute(db);
}
