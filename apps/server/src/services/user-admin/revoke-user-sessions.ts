/**
 * Ends everything a user is logged in with: their sessions (refresh tokens and
 * the access JWTs bound to them stop working at once) and, unless kept, the
 * API keys they created (and the keys those created, by cascade). Used by
 * `tern-server admin reset-password`; a password change or reset through the
 * API can call the same function.
 */
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";

export interface RevokedAccess {
  sessions: number;
  /** The deleted API keys, for the audit log of each key's organization. */
  apiKeys: { id: string; name: string; organizationId: string }[];
}

/** Run inside the transaction of the password change. */
export async function revokeUserSessions(
  db: Db,
  userId: string,
  options: { keepApiKeys?: boolean } = {},
): Promise<RevokedAccess> {
  const sessions = await db
    .updateTable("sessions")
    .set({ revoked_at: sql`now()` })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  const apiKeys = options.keepApiKeys
    ? []
    : await db
        .deleteFrom("access_tokens")
        .where("creator_user_id", "=", userId)
        .returning(["id", "name", "organization_id as organizationId"])
        .execute();
  return { sessions: Number(sessions.numUpdatedRows), apiKeys };
}
