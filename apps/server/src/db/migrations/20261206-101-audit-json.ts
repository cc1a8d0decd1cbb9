/**
 * An audit entry's `before` and `after` are kept as `json` (the text as
 * written) instead of `jsonb`. They are written once, in the transaction of
 * the change, and only ever read back whole: no query looks inside them, so
 * jsonb's parsed form bought nothing and cost its conversion on every write.
 * A bulk approval writes two device documents (about 1.5 KB each) for each
 * device: on PGlite, 10,000 entries took 2.2 s as jsonb and 1.3 s as json
 * (issue 14). The text as written also keeps the document's own key order.
 * Rewrites the table once, at this migration.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table audit_log
    alter column before type json using before::json,
    alter column after type json using after::json`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table audit_log
    alter column before type jsonb using before::jsonb,
    alter column after type jsonb using after::jsonb`.execute(db);
}
