/**
 * Diagnostics run on devices (issue 19: ping, traceroute, DNS lookup) are
 * recorded as jobs once they end; `result` holds their final result (null
 * for configuration jobs). Frozen once landed: change the schema with a new
 * migration.
 */
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("jobs").addColumn("result", "jsonb").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("jobs").dropColumn("result").execute();
}
