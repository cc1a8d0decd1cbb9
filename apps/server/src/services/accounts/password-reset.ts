/**
 * Password reset by e-mail. The request answers at once and the same way
 * whether or not the address has a user: the lookup, the token and the e-mail
 * happen after the answer, so neither its content nor its timing tells. The
 * token (256 random bits) is stored hashed, works once, for
 * TERN_PASSWORD_RESET_TTL (30 minutes); a newer request voids older tokens.
 * Confirming sets the password and revokes every session and access token.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Actor } from "../../auth/access.ts";
import { hashPassword } from "../../auth/password.ts";
import { hashSecretToken, newSecretToken } from "../../auth/secret-tokens.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError } from "../../http/errors.ts";
import type { ClientInfo } from "../sessions.ts";
import { apiAddress, sendAccountMail } from "./account-mail.ts";
import { rateLimited } from "./password-change.ts";
import { revokeUserCredentials } from "./revoke-credentials.ts";
import { auditUserEvent, userActor } from "./security-audit.ts";

/** Prefix of password-reset tokens. */
export const RESET_TOKEN_PREFIX = "tern_pwr_";
type Deps = Pick<AppDeps, "db" | "config" | "keyring" | "loginLimits" | "logger">;

const invalidToken = () => new ApiError("INVALID_TOKEN", "the reset token is unknown, used or expired; request a new one");

/**
 * Counts the request against the client address (429 past its limit), then
 * returns; the lookup and the e-mail happen in the background, after the answer.
 */
export function requestPasswordReset(deps: Deps, email: string, client: ClientInfo): void {
  const { ip } = deps.loginLimits;
  const wait = ip.blockedFor(`ip:${client.ip}`);
  if (wait !== null) throw rateLimited(wait);
  ip.hit(`ip:${client.ip}`);
  setImmediate(() => {
    sendReset(deps, email, client).catch((err) => deps.logger.warn({ err }, "password reset e-mail not sent"));
  });
}

async function sendReset(deps: Deps, email: string, client: ClientInfo): Promise<void> {
  // At most a few e-mails per address and window, so the endpoint cannot flood someone's mailbox.
  const key = `reset:${email}`;
  if (deps.loginLimits.resetMail.blockedFor(key) !== null) return;
  deps.loginLimits.resetMail.hit(key);
  const user = await deps.db.selectFrom("users").select(["id", "email"]).where("email", "=", email).executeTakeFirst();
  if (!user) return;
  const token = newSecretToken(RESET_TOKEN_PREFIX);
  const ttl = deps.config.TERN_PASSWORD_RESET_TTL;
  const actor: Actor = { kind: "system", label: `password-reset:${client.ip}`, userId: null, tokenId: null };
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable("password_resets")
      .set({ used_at: sql`now()` })
      .where("user_id", "=", user.id)
      .where("used_at", "is", null)
      .execute();
    await trx
      .insertInto("password_resets")
      .values({
        id: randomUUID(),
        user_id: user.id,
        token_hash: hashSecretToken(token),
        expires_at: new Date(Date.now() + ttl * 1000),
      })
      .execute();
    await auditUserEvent(trx, user.id, actor, {
      action: "password_reset_requested",
      resource: "users",
      resourceId: user.id,
      after: { ip: client.ip },
    });
  });
  await sendAccountMail(deps.config, user.email, {
    subject: "[Tern] Reset your password",
    paragraphs: [
      `Someone (from address ${client.ip}) asked to reset the password of your Tern account ${user.email}. If it was not you, ignore this e-mail: your password stays as it is.`,
      `To choose a new password within ${Math.round(ttl / 60)} minutes, POST this token with your new password to ${apiAddress(deps.config, "/users/password-reset/confirm")} as {"token": "…", "newPassword": "…"}. The token works once.`,
    ],
    code: token,
  });
}

/** Sets the new password for a valid reset token and revokes every session and access token of the user. */
export async function confirmPasswordReset(deps: Deps, input: { token: string; newPassword: string }, client: ClientInfo) {
  if (!input.token.startsWith(RESET_TOKEN_PREFIX)) throw invalidToken();
  const hash = await hashPassword(input.newPassword, deps.config.TERN_PASSWORD_HASH_COST);
  await deps.db.transaction().execute(async (trx) => {
    const used = await trx
      .updateTable("password_resets")
      .set({ used_at: sql`now()` })
      .where("token_hash", "=", hashSecretToken(input.token))
      .where("used_at", "is", null)
      .where("expires_at", ">", new Date())
      .returning("user_id")
      .executeTakeFirst();
    if (!used) throw invalidToken();
    await trx.updateTable("users").set({ password_hash: hash, updated_at: sql`now()` }).where("id", "=", used.user_id).execute();
    const actor = await userActor(trx, used.user_id);
    const revoked = await revokeUserCredentials(trx, used.user_id, actor);
    await auditUserEvent(trx, used.user_id, actor, {
      action: "password_reset",
      resource: "users",
      resourceId: used.user_id,
      after: { ip: client.ip, revokedSessions: revoked.sessions, revokedAccessTokens: revoked.accessTokens },
    });
  });
}
