/**
 * Registration tokens: what a new device presents to `POST /connect/register`
 * to join an organization. The secret is returned once; only its hash is
 * stored. A token expires (by default after TERN_REGISTRATION_TOKEN_TTL),
 * counts the registrations made with it, and may allow only `maxUses` of them.
 */
import { randomUUID } from "node:crypto";
import type { RegistrationToken, RegistrationTokenCreate } from "@tern/protocol";
import type { z } from "zod";
import { hashSecretToken, newSecretToken, TOKEN_PREFIX } from "../auth/secret-tokens.ts";
import type { Db } from "../db/schema.ts";
import { invalidField, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";

const PUBLIC_COLUMNS = ["id", "organization_id", "name", "expires_at", "uses", "max_uses", "created_by", "created_at"] as const;

interface TokenRow {
  id: string;
  organization_id: string;
  name: string;
  expires_at: Date | null;
  uses: number;
  max_uses: number | null;
  created_at: Date;
}

export function toRegistrationToken(row: TokenRow): RegistrationToken {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    expiresAt: row.expires_at ? row.expires_at.toISOString() : null,
    uses: row.uses,
    maxUses: row.max_uses,
    createdAt: row.created_at.toISOString(),
  };
}

export const REGISTRATION_TOKEN_LIST: ListSpec = {
  fields: {
    id: { column: "id", type: "uuid" },
    name: { column: "name", type: "text" },
    expiresAt: { column: "expires_at", type: "timestamp" },
    uses: { column: "uses", type: "number" },
    maxUses: { column: "max_uses", type: "number" },
    createdBy: { column: "created_by", type: "text" },
    createdAt: { column: "created_at", type: "timestamp" },
  },
  defaultSort: { key: "createdAt", order: "asc" },
  tiebreaker: "id",
};

export async function listRegistrationTokens(ctx: ServiceCtx, query: ListQuery) {
  const base = ctx.db.selectFrom("registration_tokens").select(PUBLIC_COLUMNS).where("organization_id", "=", ctx.org.id);
  const { rows, total } = await runList(ctx.db, base, query, REGISTRATION_TOKEN_LIST);
  return { items: rows.map(toRegistrationToken), total };
}

/** Creates a token in the request's organization; the answer is the only time its secret is shown. */
export async function createRegistrationToken(
  ctx: ServiceCtx,
  input: z.output<typeof RegistrationTokenCreate>,
): Promise<RegistrationToken & { token: string }> {
  // Omitted: the default lifetime; null: until deleted (an explicit choice).
  const expiresAt =
    input.expiresAt === undefined
      ? new Date(Date.now() + ctx.config.TERN_REGISTRATION_TOKEN_TTL * 1000).toISOString()
      : input.expiresAt;
  if (expiresAt !== null && new Date(expiresAt).getTime() <= Date.now()) throw invalidField("expiresAt", "must be in the future");
  const token = newSecretToken(TOKEN_PREFIX.registration);
  return inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .insertInto("registration_tokens")
      .values({
        id: randomUUID(),
        organization_id: tx.org.id,
        name: input.name,
        token_hash: hashSecretToken(token),
        expires_at: expiresAt,
        max_uses: input.maxUses ?? null,
        created_by: tx.actor.label,
      })
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
    const created = toRegistrationToken(row);
    await recordAudit(tx, { action: "create", resource: "tokens", resourceId: created.id, after: created });
    return { ...created, token };
  });
}

/** Deletes a token; devices registered with it stay. */
export async function deleteRegistrationToken(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .deleteFrom("registration_tokens")
      .where("id", "=", id)
      .where("organization_id", "=", tx.org.id)
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst();
    if (!row) throw notFound("registration token");
    await recordAudit(tx, { action: "delete", resource: "tokens", resourceId: id, before: toRegistrationToken(row) });
  });
}

export interface UsableRegistrationToken {
  id: string;
  name: string;
  orgId: string;
}

/**
 * The token a device presented, counted as used (the row stays locked until
 * the transaction ends), or why it cannot be used. Run it inside the
 * registration's transaction: a refused registration rolls the count back.
 */
export async function useRegistrationToken(
  db: Db,
  secret: string,
): Promise<UsableRegistrationToken | { refused: "unknown" | "expired" | "exhausted" }> {
  const row = await db
    .updateTable("registration_tokens")
    .set((eb) => ({ uses: eb("uses", "+", 1) }))
    .where("token_hash", "=", hashSecretToken(secret))
    .returning(["id", "name", "organization_id", "expires_at", "uses", "max_uses"])
    .executeTakeFirst();
  if (!row) return { refused: "unknown" };
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now()) return { refused: "expired" };
  // `uses` already counts this registration (rolled back with it when refused).
  if (row.max_uses !== null && row.uses > row.max_uses) return { refused: "exhausted" };
  return { id: row.id, name: row.name, orgId: row.organization_id };
}
