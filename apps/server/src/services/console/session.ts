/**
 * The console's browser session: sign in (password, then the second factor
 * when the user has one) to an ordinary login session whose refresh token
 * becomes the console cookie, and the session's view for the console.
 */
import type { ConsoleSession, ConsoleSignIn, LoginResult, MfaChallenge } from "@tern/protocol";
import type { UserPrincipal } from "../../auth/access.ts";
import { newCsrfToken } from "../../auth/console-cookie.ts";
import { strongerRole } from "../../auth/permissions.ts";
import { accessibleOrgsQuery, defaultOrgOf, userRolesInOrg } from "../../auth/resolve-access.ts";
import type { AppDeps } from "../../deps.ts";
import { completeSecondFactor } from "../mfa/index.ts";
import { type ClientInfo, issueSession, login, logout } from "../sessions.ts";

type Deps = Pick<AppDeps, "db" | "config" | "keyring" | "loginLimits" | "logger">;

/** A signed-in session's refresh token (the cookie value), or the second-factor challenge the login route would answer. */
export type ConsoleSignInResult = { refreshToken: string } | { challenge: MfaChallenge };

const isChallenge = (r: LoginResult): r is MfaChallenge => "mfaRequired" in r;

export async function consoleSignIn(deps: Deps, input: ConsoleSignIn, client: ClientInfo): Promise<ConsoleSignInResult> {
  if ("challenge" in input) {
    const userId = await completeSecondFactor(deps, input);
    return { refreshToken: (await issueSession(deps, userId, client)).refreshToken };
  }
  const result = await login(deps, input, client);
  return isChallenge(result) ? { challenge: result } : { refreshToken: result.refreshToken };
}

/** Ends the cookie's session (like POST /users/logout with its refresh token). */
export async function consoleSignOut(deps: Deps, refreshToken: string): Promise<void> {
  await logout(deps, refreshToken);
}

/** What the console needs after sign-in: who, which organizations with which role, and a fresh CSRF token. */
export async function consoleSessionView(
  deps: Pick<AppDeps, "db" | "keyring">,
  user: Pick<UserPrincipal, "userId" | "sessionId">,
): Promise<ConsoleSession> {
  const { db } = deps;
  const row = await db
    .selectFrom("users")
    .select(["id", "email", "name"])
    .where("id", "=", user.userId)
    .executeTakeFirstOrThrow();
  const orgs = await accessibleOrgsQuery(db, user.userId)
    .select(["o.id", "o.name"])
    .orderBy("o.created_at")
    .orderBy("o.id")
    .execute();
  const organizations: ConsoleSession["organizations"] = [];
  for (const org of orgs) {
    const roles = await userRolesInOrg(db, user.userId, org.id);
    const role = strongerRole(roles?.orgRole ?? null, roles?.accountRole ?? null);
    if (role) organizations.push({ id: org.id, name: org.name, role });
  }
  return {
    user: { id: row.id, email: row.email, ...(row.name ? { name: row.name } : {}) },
    organizations,
    defaultOrgId: await defaultOrgOf(db, user.userId),
    csrfToken: newCsrfToken(deps.keyring.jwtKey, user.sessionId),
  };
}
