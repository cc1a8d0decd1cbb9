/**
 * Network healing (docs/healing.md):
 * - `organizations.healing_mode`: `act` (heal and record), `suggest` (record
 *   only) or `off`;
 * - `healing_actions`: every action taken or suggested, with its evidence
 *   (figures before and after), listed by GET /api/healing/actions; no
 *   foreign key to devices or tunnels, the history outlives them (as the
 *   audit log does); `agent_ref` de-duplicates what an agent re-sends;
 * - `healing_baselines`: the learned baseline of each (device, link): an
 *   exponentially weighted mean and variance of RTT, loss and jitter, overall
 *   and by hour of day, and whether traffic is steered off the link now.
 * Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("organizations")
    .addColumn("healing_mode", "text", (c) => c.notNull().defaultTo("act").check(sql`healing_mode in ('act', 'suggest', 'off')`))
    .execute();

  await db.schema
    .createTable("healing_actions")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("organization_id", "uuid", (c) => c.notNull())
    .addColumn("device_id", "uuid")
    .addColumn("tunnel_id", "uuid")
    .addColumn("at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("mode", "text", (c) => c.notNull().check(sql`mode in ('act', 'suggest')`))
    .addColumn("source", "text", (c) => c.notNull().check(sql`source in ('agent', 'server')`))
    .addColumn("link", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("before", "jsonb", (c) => c.notNull())
    .addColumn("after", "jsonb")
    .addColumn("agent_ref", "text")
    .execute();
  await db.schema.createIndex("healing_actions_org_at_idx").on("healing_actions").columns(["organization_id", "at"]).execute();
  await db.schema
    .createIndex("healing_actions_agent_ref_idx")
    .on("healing_actions")
    .columns(["device_id", "agent_ref"])
    .unique()
    .execute();

  await db.schema
    .createTable("healing_baselines")
    .addColumn("device_id", "uuid", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("link", "text", (c) => c.notNull())
    .addColumn("organization_id", "uuid", (c) => c.notNull())
    .addColumn("state", "jsonb", (c) => c.notNull())
    .addColumn("rerouting", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("healing_baselines_pk", ["device_id", "link"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("healing_baselines").execute();
  await db.schema.dropTable("healing_actions").execute();
  await db.schema.alterTable("organizations").dropColumn("healing_mode").execute();
}
