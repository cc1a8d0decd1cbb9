/**
 * A version of each organization's devices, so that a filtered device list
 * can keep its total between requests (issue 14). Counting the devices that
 * match a filter reads every device of the organization: 1.7 ms of the 2.1 ms
 * PostgreSQL spent on a filtered page of 100 at 10,000 devices, in every
 * request, though the answer changes only when a device does.
 *
 * The version is a number that grows with every statement that changes what
 * a device filter can see, written in that statement's transaction:
 * - `row_counts.changes`: one for each row the row-count triggers add (a
 *   statement that inserted or deleted rows of the organization);
 * - `row_updates`: one row for each statement that updated a column a device
 *   list filters on (`update of` those columns; which organization is not
 *   known there, so it counts for every organization).
 * A reader's snapshot sees exactly the changes committed before it, and only
 * ever more of them later, so two snapshots that sum to the same version saw
 * the same devices (db/row-counts.ts `rowVersion`, http/kept-totals.ts).
 * Nothing is updated in place by writers; the row-count duty folds both.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

/**
 * The device columns a device list filters on (services/devices/devices.ts DEVICE_LIST, interfaces for its
 * `interfaces.*` keys), and the organization; test/db/list-versions.test.ts checks the list's keys against it.
 */
export const DEVICE_LIST_COLUMNS = [
  "organization_id",
  "id",
  "name",
  "description",
  "hostname",
  "machine_id",
  "is_approved",
  "connection",
  "agent_version",
  "protocol_version",
  "mlpolicy_id",
  "tags",
  "data_plane",
  "desired_hash",
  "applied_hash",
  "created_at",
  "updated_at",
  "last_connected_at",
  "interfaces",
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table row_counts add column changes bigint not null default 1`.execute(db);
  await sql`create table row_updates (
    resource text not null,
    changes bigint not null default 1
  )`.execute(db);
  await sql`create index row_updates_resource_idx on row_updates (resource)`.execute(db);
  await sql`create function tern_row_updates() returns trigger language plpgsql as $$
    begin
      insert into row_updates (resource) values (tg_table_name);
      return null;
    end $$`.execute(db);
  await sql
    .raw(`create trigger tern_row_updates after update of ${DEVICE_LIST_COLUMNS.join(", ")} on devices
      for each statement execute function tern_row_updates()`)
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger tern_row_updates on devices`.execute(db);
  await sql`drop function tern_row_updates()`.execute(db);
  await sql`drop table row_updates`.execute(db);
  await sql`alter table row_counts drop column changes`.execute(db);
}
