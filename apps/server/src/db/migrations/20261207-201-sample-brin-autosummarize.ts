/**
 * The samples' BRIN index on `at` summarizes each page range as soon as it is
 * full (issue 14). Until then a range was summarized only by a VACUUM of the
 * table, which an append-mostly table gets after 20 % of its rows were
 * inserted or deleted: at 10,000 devices over a week of samples, about a day
 * and a half of rows. A range without a summary matches every query, so the
 * retention duty's look for expired rows (every 5 s) read every page of that
 * tail: 5,339 pages for 400,000 new rows, measured, against 91 once the ranges
 * were summarized. With `autosummarize`, PostgreSQL's autovacuum summarizes a
 * filled range at its next round (a minute by default); on PGlite, which has
 * no autovacuum, the embedded maintenance does it (db/embedded-vacuum.ts).
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter index tunnel_samples_at_brin set (autosummarize = on)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter index tunnel_samples_at_brin reset (autosummarize)`.execute(db);
}
