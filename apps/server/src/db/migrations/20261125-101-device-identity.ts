/**
 * Device identity (issue 13): each device's Ed25519 public key, and the time
 * of its last signed registration (a registration proof must be newer, so a
 * captured one cannot be replayed). A machine id is no longer unique in an
 * organization: a registration that presents a known machine id without the
 * device's key becomes a device of its own (pending), never the known one.
 * The key is unique per organization instead. Devices registered before this
 * have no key; an approved one binds the key it proves on its next websocket
 * connection (its device token vouches for it), a pending one at its next
 * registration. Frozen once landed: change the schema with a new migration.
 */
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addColumn("public_key", "text")
    .addColumn("identity_proof_at", "timestamptz(3)")
    .execute();
  await db.schema.alterTable("devices").dropConstraint("devices_org_machine_key").execute();
  await db.schema.createIndex("devices_org_machine_idx").on("devices").columns(["organization_id", "machine_id"]).execute();
  await db.schema
    .createIndex("devices_org_public_key_key")
    .on("devices")
    .columns(["organization_id", "public_key"])
    .unique()
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("devices_org_public_key_key").execute();
  await db.schema.dropIndex("devices_org_machine_idx").execute();
  await sql`alter table devices add constraint devices_org_machine_key unique (organization_id, machine_id)`.execute(db);
  await db.schema.alterTable("devices").dropColumn("identity_proof_at").dropColumn("public_key").execute();
}
