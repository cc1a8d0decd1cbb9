/**
 * `POST /devices/{id}/identity/reset`: the admin forgets a device's key (a
 * router whose disk was replaced, a key that may have leaked). The device goes
 * back to pending, its device token is replaced by one nobody knows, and the
 * next registration of its machine id takes the device over with a new key
 * (and must be approved again). The trigger on `devices` ends its link
 * wherever it is, at once (approval withdrawn / token replaced).
 */
import { randomBytes } from "node:crypto";
import type { Device } from "@tern/protocol";
import { sql } from "kysely";
import { hashSecretToken } from "../../../auth/secret-tokens.ts";
import { notFound } from "../../../http/errors.ts";
import { recordAudit } from "../../audit.ts";
import { inTransaction, type ServiceCtx } from "../../context.ts";
import { getDevice } from "../devices.ts";

export async function resetDeviceIdentity(ctx: ServiceCtx, id: string): Promise<Device> {
  await inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .selectFrom("devices")
      .select(["id", "public_key", "is_approved", "machine_id"])
      .where("organization_id", "=", ctx.org.id)
      .where("id", "=", id)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound("device");
    await tx.db
      .updateTable("devices")
      .set({
        public_key: null,
        identity_proof_at: null,
        is_approved: false,
        // Nobody knows this token: the device must register again.
        device_token_hash: hashSecretToken(randomBytes(32).toString("base64url")),
        updated_at: sql`now()`,
      })
      .where("id", "=", id)
      .execute();
    await recordAudit(tx, {
      action: "identity-reset",
      resource: "devices",
      resourceId: id,
      before: { publicKey: row.public_key, isApproved: row.is_approved },
      after: { publicKey: null, isApproved: false },
    });
  });
  return getDevice(ctx, id);
}
