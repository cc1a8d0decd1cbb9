/**
 * A signed-in user changes their own password. The current password is
 * required (and throttled like a login); every session and access token of the
 * user is revoked and the caller gets a fresh session in the answer.
 */
import type { PasswordChange, TokenPair } from "@tern/protocol";
import { sql } from "kysely";
import type { UserPrincipal } from "../../auth/access.ts";
import { hashPassword, verifyPassword } from "../../auth/password.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError, invalidField, notFound } from "../../http/errors.ts";
import { type ClientInfo, issueSession } from "../sessions.ts";
import { revokeUserCredentials } from "./revoke-credentials.ts";
import { auditUserEvent, userActor } from "./security-audit.ts";

type Deps = Pick<AppDeps, "db" | "config" | "keyring" | "loginLimits">;

export const rateLimited = (seconds: number) =>
  new ApiError("RATE_LIMITED", `too many attempts; try again in ${seconds} s`, [], { "retry-after": String(seconds) });

export async function changePassword(
  deps: Deps,
  user: UserPrincipal,
  input: PasswordChange,
  client: ClientInfo,
): Promise<TokenPair> {
  const { ip, backoff } = deps.loginLimits;
  const wait = ip.blockedFor(`ip:${client.ip}`) ?? backoff.admit(client.ip, user.email);
  if (wait !== null) throw rateLimited(wait);
  ip.hit(`ip:${client.ip}`);

  const row = await deps.db.selectFrom("users").select("password_hash").where("id", "=", user.userId).executeTakeFirst();
  if (!row) throw notFound("user");
  const actor = await userActor(deps.db, user.userId);
  if (!(await verifyPassword(input.currentPassword, row.password_hash))) {
    backoff.failed(client.ip, user.email);
    await auditUserEvent(deps.db, user.userId, actor, {
      action: "password_change_failed",
      resource: "users",
      resourceId: user.userId,
      after: { ip: client.ip },
    });
    throw invalidField("currentPassword", "the current password is wrong");
  }
  backoff.succeeded(client.ip, user.email);
  const hash = await hashPassword(input.newPassword, deps.config.TERN_PASSWORD_HASH_COST);
  return deps.db.transaction().execute(async (trx) => {
    await trx.updateTable("users").set({ password_hash: hash, updated_at: sql`now()` }).where("id", "=", user.userId).execute();
    const revoked = await revokeUserCredentials(trx, user.userId, actor);
    const pair = await issueSession({ ...deps, db: trx }, user.userId, client);
    await auditUserEvent(trx, user.userId, actor, {
      action: "password_change",
      resource: "users",
      resourceId: user.userId,
      after: { ip: client.ip, revokedSessions: revoked.sessions, revokedAccessTokens: revoked.accessTokens },
    });
    return pair;
  });
}
