/**
 * Login sessions: e-mail + password → a short-lived access JWT and a refresh
 * token (stored hashed, rotated on every refresh, revoked by logout). The
 * e-mail must match exactly, letter case included.
 */
import { randomUUID } from "node:crypto";
import type { LoginResult, TokenPair } from "@tern/protocol";
import { sql } from "kysely";
import { signAccessToken } from "../auth/jwt.ts";
import { dummyPasswordHash, verifyPassword } from "../auth/password.ts";
import { hashSecretToken, newSecretToken, TOKEN_PREFIX } from "../auth/secret-tokens.ts";
import type { AppDeps } from "../deps.ts";
import { ApiError } from "../http/errors.ts";
import { auditFailedLogin, auditLogout } from "./accounts/sign-in-audit.ts";
import { startSecondFactor } from "./mfa/challenge.ts";

export interface ClientInfo {
  ip: string;
  userAgent: string;
}

type SessionDeps = Pick<AppDeps, "db" | "config" | "keyring" | "loginLimits" | "logger">;

const rateLimited = (seconds: number) =>
  new ApiError("RATE_LIMITED", `too many login attempts; try again in ${seconds} s`, [], { "retry-after": String(seconds) });
const badCredentials = () => new ApiError("UNAUTHENTICATED", "wrong username or password");

type IssueDeps = Pick<AppDeps, "db" | "config" | "keyring">;

function refreshExpiry(deps: Pick<AppDeps, "config">): Date {
  return new Date(Date.now() + deps.config.TERN_REFRESH_TOKEN_TTL * 1000);
}

async function tokenPair(
  deps: Pick<AppDeps, "config" | "keyring">,
  userId: string,
  sessionId: string,
  refreshToken: string,
): Promise<TokenPair> {
  const ttl = deps.config.TERN_ACCESS_TOKEN_TTL;
  return {
    accessToken: await signAccessToken({ sub: userId, sid: sessionId }, deps.keyring.jwtKey, ttl),
    refreshToken,
    tokenType: "Bearer",
    expiresIn: ttl,
  };
}

export async function login(
  deps: SessionDeps,
  input: { username: string; password: string },
  client: ClientInfo,
): Promise<LoginResult> {
  // Per-address limit, then the back-off of failed passwords (never a lock-out of the owner: login-backoff.ts).
  const { ip, backoff } = deps.loginLimits;
  const ipKey = `ip:${client.ip}`;
  const wait = ip.blockedFor(ipKey) ?? backoff.admit(client.ip, input.username);
  if (wait !== null) throw rateLimited(wait);
  ip.hit(ipKey);

  const user = await deps.db
    .selectFrom("users")
    .select(["id", "password_hash"])
    .where("email", "=", input.username)
    .executeTakeFirst();
  // Verify against a dummy hash for unknown users so the answer time does not reveal who exists.
  const ok = await verifyPassword(
    input.password,
    user?.password_hash ?? (await dummyPasswordHash(deps.config.TERN_PASSWORD_HASH_COST)),
  );
  if (!user || !ok) {
    backoff.failed(client.ip, input.username);
    // Not awaited: the answer for a known user must take no longer than for an unknown one.
    if (user)
      void auditFailedLogin(deps.db, user.id, client).catch((err) => deps.logger.warn({ err }, "audit of a failed login"));
    throw badCredentials();
  }
  backoff.succeeded(client.ip, input.username);
  return finishSignIn(deps, user.id, client);
}

/**
 * The end of every sign-in (password, SSO): a second-factor challenge when the
 * user has 2FA, else a new session.
 */
export async function finishSignIn(deps: SessionDeps, userId: string, client: ClientInfo): Promise<LoginResult> {
  return (await startSecondFactor(deps, userId)) ?? issueSession(deps, userId, client);
}

/**
 * A new session of a user who has proved who they are: the one place sessions
 * are issued (sign-in, SSO, a password change's fresh session). `deps.db` may
 * be the caller's transaction.
 */
export async function issueSession(deps: IssueDeps, userId: string, client: ClientInfo): Promise<TokenPair> {
  const sessionId = randomUUID();
  const refreshToken = newSecretToken(TOKEN_PREFIX.refresh);
  await deps.db
    .insertInto("sessions")
    .values({
      id: sessionId,
      user_id: userId,
      refresh_hash: hashSecretToken(refreshToken),
      expires_at: refreshExpiry(deps),
      ip: client.ip.slice(0, 100),
      user_agent: client.userAgent.slice(0, 300),
    })
    .execute();
  return tokenPair(deps, userId, sessionId, refreshToken);
}

/** A new pair for a valid refresh token; the old refresh token stops working. */
export async function refresh(deps: SessionDeps, refreshToken: string): Promise<TokenPair> {
  return deps.db.transaction().execute(async (trx) => {
    const session = await trx
      .selectFrom("sessions")
      .select(["id", "user_id"])
      .where("refresh_hash", "=", hashSecretToken(refreshToken))
      .where("revoked_at", "is", null)
      .where("expires_at", ">", new Date())
      .forUpdate()
      .executeTakeFirst();
    if (!session) throw new ApiError("UNAUTHENTICATED", "invalid, expired or revoked refresh token");
    const next = newSecretToken(TOKEN_PREFIX.refresh);
    await trx
      .updateTable("sessions")
      .set({ refresh_hash: hashSecretToken(next), expires_at: refreshExpiry(deps), last_used_at: sql`now()` })
      .where("id", "=", session.id)
      .execute();
    return tokenPair(deps, session.user_id, session.id, next);
  });
}

/** Revokes the session of a refresh token: its refresh token and its access JWTs stop working. */
export async function logout(deps: SessionDeps, refreshToken: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const ended = await trx
      .updateTable("sessions")
      .set({ revoked_at: sql`now()` })
      .where("refresh_hash", "=", hashSecretToken(refreshToken))
      .where("revoked_at", "is", null)
      .returning(["id", "user_id"])
      .executeTakeFirst();
    if (ended) await auditLogout(trx, ended.user_id, ended.id);
  });
}
