/**
 * The VRRP state each member last reported (MASTER, BACKUP, FAULT, INIT), so
 * `GET /vrrp/status` reads it from the database on any server instance. The
 * device gateway writes it from status messages; `unknown` until then.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("vrrp_members")
    .addColumn("state", "text", (c) =>
      c.notNull().defaultTo("unknown").check(sql`state in ('MASTER', 'BACKUP', 'FAULT', 'INIT', 'unknown')`),
    )
    // When the router entered the state (as the device saw it), and when the server recorded that state.
    .addColumn("state_since", "timestamptz(3)")
    .addColumn("state_reported_at", "timestamptz(3)")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("vrrp_members")
    .dropColumn("state")
    .dropColumn("state_since")
    .dropColumn("state_reported_at")
    .execute();
}
