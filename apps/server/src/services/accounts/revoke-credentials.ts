/**
 * Ends everything a user signed in with: every login session (refresh token
 * and the access JWTs issued for it, which are checked against their session
 * on each request) and every access token (API key) whose chain of creators
 * starts at the user. Run when the password changes or is reset (through the
 * API, or by an operator with `tern-server admin reset-password`): whoever held
 * the old password may have made either.
 */
import { sql } from "kysely";
import type { Actor } from "../../auth/access.ts";
import type { Db } from "../../db/schema.ts";
import { toAccessToken } from "../access-tokens.ts";
import { recordAudit } from "../audit.ts";

export interface Revoked {
  sessions: number;
  accessTokens: number;
  /** The deleted access tokens. */
  deletedKeys: { id: string; name: string; organizationId: string }[];
}

/** Revokes inside the caller's transaction `tx`; each deleted key is audited in its organization. */
export async function revokeUserCredentials(
  tx: Db,
  userId: string,
  actor: Actor,
  options: { keepApiKeys?: boolean } = {},
): Promise<Revoked> {
  if (!tx.isTransaction) throw new Error("revokeUserCredentials must run inside a transaction");
  const sessions = await tx
    .updateTable("sessions")
    .set({ revoked_at: sql`now()` })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .returning("id")
    .execute();
  // Keys made by the user's keys carry the same creator_user_id; parent_token_id cascades as well.
  const keys = options.keepApiKeys
    ? []
    : await tx
        .deleteFrom("access_tokens as t")
        .where("t.creator_user_id", "=", userId)
        .returning([
          "t.id",
          "t.organization_id",
          "t.name",
          "t.role",
          "t.permissions",
          "t.creator",
          "t.creator_user_id",
          "t.parent_token_id",
          "t.created_at",
          "t.last_used_at",
        ])
        .execute();
  if (keys.length) {
    const orgs = await tx
      .selectFrom("organizations")
      .select(["id", "account_id", "name"])
      .where(
        "id",
        "in",
        keys.map((k) => k.organization_id),
      )
      .execute();
    for (const key of keys) {
      const org = orgs.find((o) => o.id === key.organization_id);
      if (!org) continue;
      await recordAudit(
        { db: tx, org: { id: org.id, accountId: org.account_id, name: org.name }, actor },
        { action: "revoke", resource: "accesstokens", resourceId: key.id, before: toAccessToken(key) },
      );
    }
  }
  return {
    sessions: sessions.length,
    accessTokens: keys.length,
    deletedKeys: keys.map((k) => ({ id: k.id, name: k.name, organizationId: k.organization_id })),
  };
}
