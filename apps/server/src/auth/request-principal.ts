/**
 * Who a request comes from: the bearer token when there is an Authorization
 * header (unchanged API behaviour), else the console cookie, which needs the
 * CSRF header on unsafe methods. One function so every protected route
 * accepts both the same way.
 */
import type { Context } from "hono";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../http/errors.ts";
import type { Principal, UserPrincipal } from "./access.ts";
import { authenticate, bearerToken } from "./authenticate.ts";
import { authenticateConsoleCookie, CSRF_HEADER, consoleCookieOf, isUnsafeMethod, verifyCsrfToken } from "./console-cookie.ts";

const unauthenticated = (message: string) => new ApiError("UNAUTHENTICATED", message, [], { "www-authenticate": "Bearer" });

export interface RequestPrincipal {
  principal: Principal;
  via: "bearer" | "cookie";
}

/** The caller, or throws 401 UNAUTHENTICATED / 403 CSRF_FAILED. */
export async function requestPrincipal(c: Context<AppEnv>): Promise<RequestPrincipal> {
  const { db, keyring } = c.get("deps");
  const header = c.req.header("authorization");
  if (header !== undefined) {
    const token = bearerToken(header);
    if (!token) throw unauthenticated("missing bearer token (Authorization: Bearer <token>)");
    const principal = await authenticate(db, token, keyring.jwtVerifyKeys);
    if (!principal) throw unauthenticated("invalid or expired token");
    return { principal, via: "bearer" };
  }
  if (!consoleCookieOf(c)) throw unauthenticated("missing bearer token (Authorization: Bearer <token>) or console session");
  return { principal: await cookiePrincipal(c), via: "cookie" };
}

/** The user of the console cookie (CSRF-checked on unsafe methods), or throws 401 / 403 CSRF_FAILED. */
export async function cookiePrincipal(c: Context<AppEnv>): Promise<UserPrincipal> {
  const { db, keyring } = c.get("deps");
  const cookie = consoleCookieOf(c);
  if (!cookie) throw unauthenticated("no console session; sign in");
  const principal = await authenticateConsoleCookie(db, cookie);
  if (!principal) throw unauthenticated("the console session ended; sign in again");
  if (isUnsafeMethod(c.req.method) && !verifyCsrfToken(keyring.jwtVerifyKeys, principal.sessionId, c.req.header(CSRF_HEADER)))
    throw new ApiError("CSRF_FAILED", "missing or wrong X-CSRF-Token header (GET /api/console/session gives one)");
  return principal;
}
