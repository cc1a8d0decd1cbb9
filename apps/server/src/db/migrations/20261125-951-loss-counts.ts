/**
 * Raw probe counts behind each tunnel sample (issue 17): `sent` (probes
 * finalised: answered or lost) and `received` (answered) are the agent's
 * cumulative counters for the reported target, `window_ms` the span of the
 * window the reported loss is over. With the counters, loss over any period
 * is Δ(sent − received) / Δsent between two samples of one counter run (a
 * count lower than the previous one means the agent restarted it). Null for
 * samples from agents that do not send them. Frozen once landed: change the
 * schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ["tunnel_samples", "tunnel_latest"]) {
    await db.schema
      .alterTable(table)
      .addColumn("window_ms", "integer")
      .addColumn("sent", "bigint")
      .addColumn("received", "bigint")
      .execute();
    await sql`alter table ${sql.table(table)} add constraint ${sql.ref(`${table}_received_le_sent`)} check (received <= sent)`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["tunnel_samples", "tunnel_latest"])
    await db.schema.alterTable(table).dropColumn("window_ms").dropColumn("sent").dropColumn("received").execute();
}
