/** A new login session for a user (as POST /users/login makes), inside the caller's transaction. */
import { randomUUID } from "node:crypto";
import type { TokenPair } from "@tern/protocol";
import { signAccessToken } from "../../auth/jwt.ts";
import { hashSecretToken, newSecretToken, TOKEN_PREFIX } from "../../auth/secret-tokens.ts";
import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import type { ClientInfo } from "../sessions.ts";

export async function openSession(
  deps: Pick<AppDeps, "config" | "keyring">,
  db: Db,
  userId: string,
  client: ClientInfo,
): Promise<TokenPair> {
  const sessionId = randomUUID();
  const refreshToken = newSecretToken(TOKEN_PREFIX.refresh);
  await db
    .insertInto("sessions")
    .values({
      id: sessionId,
      user_id: userId,
      refresh_hash: hashSecretToken(refreshToken),
      expires_at: new Date(Date.now() + deps.config.TERN_REFRESH_TOKEN_TTL * 1000),
      ip: client.ip.slice(0, 100),
      user_agent: client.userAgent.slice(0, 300),
    })
    .execute();
  const ttl = deps.config.TERN_ACCESS_TOKEN_TTL;
  return {
    accessToken: await signAccessToken({ sub: userId, sid: sessionId }, deps.keyring.jwtKey, ttl),
    refreshToken,
    tokenType: "Bearer",
    expiresIn: ttl,
  };
}
