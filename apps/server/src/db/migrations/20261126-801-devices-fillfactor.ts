/**
 * `devices` pages keep room for updated rows (issue 14): a device's row is
 * written at every connect, disconnect and applied config, and with full
 * pages none of those updates could stay in the row's page, so each one
 * wrote all ten of the table's indexes (the GIN of tags included). With half
 * of each page free, PostgreSQL updates in place (a heap-only tuple) whenever
 * no indexed column changes: measured on 10,000 rows, 84 % of such updates
 * were heap-only and a bulk update took 80–120 ms instead of 250–290 ms.
 * The table takes about twice the pages; new and updated rows get the room,
 * so an existing table gains it as its rows are written.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table devices set (fillfactor = 50)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table devices reset (fillfactor)`.execute(db);
}
