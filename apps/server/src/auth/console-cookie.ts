/**
 * The console's browser session: an HttpOnly, SameSite=Strict cookie holding
 * the refresh token of an ordinary login session (so it is stored only as a
 * hash, listed with the user's sessions, and ended by logout, session
 * revocation and password changes like any other), and a CSRF token that
 * unsafe requests authenticated by the cookie must echo in X-CSRF-Token.
 *
 * The CSRF token is stateless: a random nonce and an HMAC over the session id
 * and that nonce, keyed from the server key. A fresh one per GET of the
 * session keeps every open tab's token valid; it proves the request came from
 * a page that could read the session's body (same origin), which a forging
 * site cannot.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Db } from "../db/schema.ts";
import type { AppEnv } from "../http/env.ts";
import type { UserPrincipal } from "./access.ts";
import { hashSecretToken } from "./secret-tokens.ts";

export const CONSOLE_COOKIE = "tern_console";
export const CSRF_HEADER = "x-csrf-token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isUnsafeMethod(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

function csrfMac(key: string, sessionId: string, nonce: string): Buffer {
  return createHmac("sha256", `tern-csrf:${key}`).update(`${sessionId}.${nonce}`).digest();
}

/** A new CSRF token for the session (any number may be valid at once). */
export function newCsrfToken(jwtKey: string, sessionId: string): string {
  const nonce = randomBytes(16).toString("base64url");
  return `${nonce}.${csrfMac(jwtKey, sessionId, nonce).toString("base64url")}`;
}

/** True when `token` was made by newCsrfToken for this session with one of the keys. */
export function verifyCsrfToken(keys: readonly string[], sessionId: string, token: string | undefined): boolean {
  const [nonce, mac, extra] = (token ?? "").split(".");
  if (!nonce || !mac || extra !== undefined) return false;
  const given = Buffer.from(mac, "base64url");
  return keys.some((key) => {
    const expected = csrfMac(key, sessionId, nonce);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export function consoleCookieOf(c: Context<AppEnv>): string | undefined {
  return getCookie(c, CONSOLE_COOKIE);
}

export function setConsoleCookie(c: Context<AppEnv>, refreshToken: string): void {
  const { config } = c.get("deps");
  setCookie(c, CONSOLE_COOKIE, refreshToken, {
    httpOnly: true,
    sameSite: "Strict",
    path: "/",
    maxAge: config.TERN_REFRESH_TOKEN_TTL,
    secure: isHttps(c),
  });
}

export function clearConsoleCookie(c: Context<AppEnv>): void {
  deleteCookie(c, CONSOLE_COOKIE, { path: "/", httpOnly: true, sameSite: "Strict", secure: isHttps(c) });
}

/** Served over https: the public URL says so, or the request itself (directly or, when trusted, via the proxy). */
function isHttps(c: Context<AppEnv>): boolean {
  const { config } = c.get("deps");
  if (config.TERN_PUBLIC_URL?.startsWith("https://")) return true;
  if (config.TERN_TRUST_PROXY && c.req.header("x-forwarded-proto") === "https") return true;
  return new URL(c.req.url).protocol === "https:";
}

/** The user of a console cookie; null for an unknown, revoked or expired session. */
export async function authenticateConsoleCookie(db: Db, cookie: string, now = new Date()): Promise<UserPrincipal | null> {
  const row = await db
    .selectFrom("sessions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .select(["u.id as userId", "u.email", "s.id as sessionId", "u.default_org_id as defaultOrgId"])
    .where("s.refresh_hash", "=", hashSecretToken(cookie))
    .where("s.revoked_at", "is", null)
    .where("s.expires_at", ">", now)
    .executeTakeFirst();
  return row ? { kind: "user", ...row } : null;
}
