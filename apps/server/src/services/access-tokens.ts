/**
 * Access tokens (API keys): one organization, a role and per-resource masks,
 * never more than the rights of whoever creates them. The secret is returned
 * once; only its hash is stored.
 */
import { randomUUID } from "node:crypto";
import type { AccessToken, AccessTokenCreate, Permissions } from "@tern/protocol";
import type { z } from "zod";
import { completePermissions, exceedingResources, ROLE_RANK } from "../auth/permissions.ts";
import { hashSecretToken, newSecretToken, TOKEN_PREFIX } from "../auth/secret-tokens.ts";
import { toJson } from "../db/json.ts";
import type { AccessTokenRow } from "../db/schema.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";

export function toAccessToken(row: Omit<AccessTokenRow, "token_hash">): AccessToken {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    role: row.role,
    // In PERMISSION_RESOURCES order, and complete when resources were added after the key was made.
    permissions: completePermissions(row.role, row.permissions as Partial<Permissions>),
    creator: row.creator,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at ? row.last_used_at.toISOString() : null,
  };
}

export const ACCESS_TOKEN_LIST: ListSpec = {
  fields: {
    id: { column: "id", type: "uuid" },
    name: { column: "name", type: "text" },
    role: { column: "role", type: "text" },
    creator: { column: "creator", type: "text" },
    createdAt: { column: "created_at", type: "timestamp" },
    lastUsedAt: { column: "last_used_at", type: "timestamp" },
  },
  defaultSort: { key: "createdAt", order: "asc" },
  tiebreaker: "id",
};

/** Every column but the hash. */
const PUBLIC_COLUMNS = [
  "id",
  "organization_id",
  "name",
  "role",
  "permissions",
  "creator",
  "creator_user_id",
  "parent_token_id",
  "created_at",
  "last_used_at",
] as const;

export async function listAccessTokens(ctx: ServiceCtx, query: ListQuery) {
  const base = ctx.db.selectFrom("access_tokens").select(PUBLIC_COLUMNS).where("organization_id", "=", ctx.org.id);
  const { rows, total } = await runList(ctx.db, base, query, ACCESS_TOKEN_LIST);
  return { items: rows.map(toAccessToken), total };
}

/** Creates a key in the request's organization; refuses any bit the caller does not hold. */
export async function createAccessToken(
  ctx: ServiceCtx,
  input: z.output<typeof AccessTokenCreate>,
): Promise<AccessToken & { token: string }> {
  if (ROLE_RANK[input.role] > ROLE_RANK[ctx.role]) {
    throw new ApiError("FORBIDDEN", `a ${ctx.role} cannot create a key with role ${input.role}`, [
      { path: "role", message: `must not exceed your role (${ctx.role})` },
    ]);
  }
  const permissions = completePermissions(input.role, input.permissions);
  const exceeding = exceedingResources(permissions, ctx.permissions);
  if (exceeding.length) {
    throw new ApiError(
      "FORBIDDEN",
      `a key cannot have rights its creator lacks: ${exceeding.join(", ")}`,
      exceeding.map((r) => ({
        path: `permissions.${r}`,
        message: `asks for mask ${permissions[r]}, you hold ${ctx.permissions[r] ?? 0}`,
      })),
    );
  }
  if (!ctx.actor.userId) throw new ApiError("FORBIDDEN", "only users and their keys can create keys");
  const token = newSecretToken(TOKEN_PREFIX.access);
  return inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .insertInto("access_tokens")
      .values({
        id: randomUUID(),
        organization_id: tx.org.id,
        name: input.name,
        role: input.role,
        permissions: toJson(permissions),
        token_hash: hashSecretToken(token),
        creator: tx.actor.label,
        creator_user_id: tx.actor.userId!,
        parent_token_id: tx.actor.tokenId,
      })
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
    const created = toAccessToken(row);
    await recordAudit(tx, { action: "create", resource: "accesstokens", resourceId: created.id, after: created });
    return { ...created, token };
  });
}

/** Deletes a key of the request's organization (and the keys it created). */
export async function deleteAccessToken(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .deleteFrom("access_tokens")
      .where("id", "=", id)
      .where("organization_id", "=", tx.org.id)
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst();
    if (!row) throw notFound("access token");
    await recordAudit(tx, {
      action: "delete",
      resource: "accesstokens",
      resourceId: id,
      before: toAccessToken(row),
    });
  });
}
