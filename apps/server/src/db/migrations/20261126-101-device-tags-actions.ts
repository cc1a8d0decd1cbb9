/**
 * Device tags and remote actions (issue 19):
 *
 * 1. `devices.tags`: free-form tags (text[], deduplicated and validated by the
 *    service), with a GIN index so `tags @> {x}` / `tags && {x,y}` filters of
 *    the device list and of device selections stay index scans at fleet size.
 * 2. `devices.data_plane`: `running` or `stopped`, what the last `stop` /
 *    `start` action the device acknowledged left it in (docs/server.md).
 *
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addColumn("tags", sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .execute();
  await db.schema
    .alterTable("devices")
    .addColumn("data_plane", "text", (c) => c.notNull().defaultTo("running"))
    .execute();
  await sql`create index devices_tags_idx on devices using gin (tags)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index devices_tags_idx`.execute(db);
  await db.schema.alterTable("devices").dropColumn("data_plane").execute();
  await db.schema.alterTable("devices").dropColumn("tags").execute();
}
