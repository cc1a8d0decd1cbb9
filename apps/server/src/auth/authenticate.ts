/**
 * Bearer credentials → principal. Two kinds: an access JWT from login (checked
 * against its session, so logout ends it at once) or an access token (API key,
 * `tern_at_…`, looked up by its hash).
 */
import type { Permissions } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import type { Principal } from "./access.ts";
import { verifyAccessToken } from "./jwt.ts";
import { completePermissions } from "./permissions.ts";
import { hashSecretToken, TOKEN_PREFIX } from "./secret-tokens.ts";

/** last_used_at of a key is written at most this often, not on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

export async function authenticate(
  db: Db,
  token: string,
  jwtKey: string | readonly string[],
  now = new Date(),
): Promise<Principal | null> {
  return (await authenticateWithExpiry(db, token, jwtKey, now))?.principal ?? null;
}

/** authenticate() and when the credential's session ends (null: a key, which does not expire by itself). */
export async function authenticateWithExpiry(
  db: Db,
  token: string,
  jwtKey: string | readonly string[],
  now = new Date(),
): Promise<{ principal: Principal; expiresAt: Date | null } | null> {
  if (token.startsWith(TOKEN_PREFIX.access)) {
    const principal = await authenticateAccessToken(db, token, now);
    return principal ? { principal, expiresAt: null } : null;
  }
  const claims = await verifyAccessToken(token, jwtKey);
  if (!claims) return null;
  const row = await db
    .selectFrom("sessions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .select(["u.id as userId", "u.email", "s.id as sessionId", "u.default_org_id as defaultOrgId", "s.expires_at as expiresAt"])
    .where("s.id", "=", claims.sid)
    .where("s.user_id", "=", claims.sub)
    .where("s.revoked_at", "is", null)
    .where("s.expires_at", ">", now)
    .executeTakeFirst();
  if (!row) return null;
  const { expiresAt, ...principal } = row;
  return { principal: { kind: "user", ...principal }, expiresAt };
}

/** Records that a key was used now (at most once a minute per key: see LAST_USED_RESOLUTION_MS). */
export async function touchAccessToken(db: Db, tokenId: string): Promise<void> {
  await db.updateTable("access_tokens").set({ last_used_at: sql`now()` }).where("id", "=", tokenId).execute();
}

async function authenticateAccessToken(db: Db, token: string, now: Date): Promise<Principal | null> {
  const row = await db
    .selectFrom("access_tokens")
    .select(["id", "name", "organization_id", "role", "permissions", "creator_user_id", "last_used_at"])
    .where("token_hash", "=", hashSecretToken(token))
    .executeTakeFirst();
  if (!row) return null;
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > LAST_USED_RESOLUTION_MS) {
    await touchAccessToken(db, row.id);
  }
  return {
    kind: "token",
    tokenId: row.id,
    name: row.name,
    orgId: row.organization_id,
    role: row.role,
    // Resources added after the key was made get the key's role defaults.
    masks: completePermissions(row.role, row.permissions as Partial<Permissions>),
    creatorUserId: row.creator_user_id,
  };
}
