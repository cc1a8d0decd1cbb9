/**
 * The Ed25519 public keys an account's operator signs agent packages with (account-wide: packages belong to the
 * operator and serve all of the account's organizations). The private keys never reach the server.
 */
import { randomUUID } from "node:crypto";
import type { AgentSigningKey } from "@tern/protocol";
import { ApiError, notFound } from "../../http/errors.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";

type Row = { id: string; name: string; public_key: string; created_at: Date };

const toKey = (r: Row): AgentSigningKey => ({
  id: r.id,
  name: r.name,
  publicKey: r.public_key,
  createdAt: r.created_at.toISOString(),
});

export async function listSigningKeys(ctx: ServiceCtx): Promise<AgentSigningKey[]> {
  const rows = await ctx.db
    .selectFrom("agent_signing_keys")
    .select(["id", "name", "public_key", "created_at"])
    .where("account_id", "=", ctx.org.accountId)
    .orderBy("created_at")
    .execute();
  return rows.map(toKey);
}

export async function addSigningKey(ctx: ServiceCtx, input: { name: string; publicKey: string }): Promise<AgentSigningKey> {
  if (Buffer.from(input.publicKey, "base64").length !== 32)
    throw new ApiError("VALIDATION_FAILED", "publicKey must be 32 bytes", [{ path: "publicKey", message: "must be 32 bytes" }]);
  return inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .insertInto("agent_signing_keys")
      .values({ id: randomUUID(), account_id: tx.org.accountId, name: input.name, public_key: input.publicKey })
      .onConflict((oc) => oc.columns(["account_id", "public_key"]).doNothing())
      .returning(["id", "name", "public_key", "created_at"])
      .executeTakeFirst();
    if (!row) throw new ApiError("CONFLICT", "this public key is registered already");
    await recordAudit(tx, {
      action: "agent_signing_key_added",
      resource: "accounts",
      resourceId: row.id,
      after: { name: row.name, publicKey: row.public_key },
    });
    return toKey(row);
  });
}

/** Removes a key; refused (CONFLICT) while packages it signed are kept: delete those first. */
export async function deleteSigningKey(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const key = await tx.db
      .selectFrom("agent_signing_keys")
      .select(["id", "name"])
      .where("id", "=", id)
      .where("account_id", "=", tx.org.accountId)
      .forUpdate()
      .executeTakeFirst();
    if (!key) throw notFound("signing key");
    const used = await tx.db.selectFrom("agent_packages").select("id").where("signing_key_id", "=", id).executeTakeFirst();
    if (used) throw new ApiError("CONFLICT", "packages signed by this key exist: delete them first");
    await tx.db.deleteFrom("agent_signing_keys").where("id", "=", id).execute();
    await recordAudit(tx, {
      action: "agent_signing_key_deleted",
      resource: "accounts",
      resourceId: id,
      before: { name: key.name },
    });
  });
}
