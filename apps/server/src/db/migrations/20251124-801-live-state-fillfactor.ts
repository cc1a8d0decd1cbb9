/**
 * Live state is rewritten in place all the time: every status updates its
 * device's `device_state` row and each tunnel end's `tunnel_latest` row. With
 * room left in each page, PostgreSQL makes those HOT updates (the new row
 * version goes into the same page and no index entry is added), which cut the
 * time of an ingest flush by about 40 % in the benchmark (docs/bench.md).
 * Rows written before this keep their pages until they are updated or vacuumed.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table device_state set (fillfactor = 50)`.execute(db);
  await sql`alter table tunnel_latest set (fillfactor = 50)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table device_state reset (fillfactor)`.execute(db);
  await sql`alter table tunnel_latest reset (fillfactor)`.execute(db);
}
