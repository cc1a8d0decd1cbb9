/**
 * The middleware every non-public route gets from defineRoute: authenticate,
 * resolve the one organization of the request, and require the permission bit
 * of the route's method on the route's resource. It runs before validation, so
 * an anonymous or unauthorized caller learns nothing from validation errors.
 */
import type { PermissionBit, PermissionResource } from "@tern/protocol";
import { ROLE_PERMISSIONS } from "@tern/protocol";
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import type { Db } from "../db/schema.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError, forbidden, invalidField, notFound } from "../http/errors.ts";
import { assertMfaPolicy } from "../services/mfa/policy.ts";
import type { Access, Principal } from "./access.ts";
import { AuthCache, lastUsedIsStale } from "./auth-cache.ts";
import { authenticateWithExpiry, bearerToken, LAST_USED_RESOLUTION_MS, touchAccessToken } from "./authenticate.ts";
import { bitForMethod, hasPermission, NO_PERMISSIONS } from "./permissions.ts";
import { cookiePrincipal } from "./request-principal.ts";
import { accessibleOrgsQuery, defaultOrgOf, resolveAccess } from "./resolve-access.ts";

export interface RouteAuthorization {
  /** The permission resource whose mask the route needs. */
  resource: PermissionResource;
  /**
   * `organization` (default): the caller's rights in the request's organization.
   * `account`: the caller's own role on the whole account (account-wide acts such
   * as creating organizations); keys never have it.
   */
  scope?: "organization" | "account";
  /** Take the organization from this path parameter instead of `?org` (e.g. /organizations/{id}). */
  orgParam?: string;
  /** Take the account from this path parameter (e.g. /accounts/{id}). */
  accountParam?: string;
  /**
   * The bit to require instead of the method's (e.g. `put` for a GET that the
   * spec makes perform an action, so read-only callers cannot trigger it).
   */
  permission?: PermissionBit;
}

const Uuid = z.uuid();
const unauthenticated = (message: string) => new ApiError("UNAUTHENTICATED", message, [], { "www-authenticate": "Bearer" });

export function authorize(auth: RouteAuthorization, method: string): MiddlewareHandler<AppEnv> {
  const bit = auth.permission ?? bitForMethod(method);
  return async (c, next) => {
    const { db, keyring, authCache } = c.get("deps");
    // Validated only after the credential is (resolveRequest), so an anonymous caller learns nothing from it;
    // a cached entry exists only for values that passed.
    const rawAccount = auth.accountParam ? c.req.param(auth.accountParam) : undefined;
    const rawOrg = auth.accountParam ? undefined : auth.orgParam ? c.req.param(auth.orgParam) : c.req.query("org");
    const header = c.req.header("authorization");
    let resolved: Access;
    if (header === undefined && c.req.header("cookie") !== undefined) {
      // The console's cookie session (CSRF-checked on unsafe methods); not cached: a browser's requests are few.
      const principal = await cookiePrincipal(c);
      resolved = await resolveFor(db, principal, rawAccount, rawOrg, auth);
    } else {
      const token = bearerToken(header);
      if (!token) throw unauthenticated("missing bearer token (Authorization: Bearer <token>) or console session");
      const lookup = () => resolveRequest(db, token, keyring.jwtVerifyKeys, rawAccount, rawOrg, auth);
      const selector = rawAccount !== undefined ? `a:${rawAccount}` : rawOrg !== undefined ? `o:${rawOrg}` : "d";
      ({ resolved } = authCache ? await cachedResolve(authCache, db, token, selector, lookup) : await lookup());
    }
    const access: Access =
      auth.scope === "account"
        ? {
            ...resolved,
            permissions: resolved.accountRole ? ROLE_PERMISSIONS[resolved.accountRole] : NO_PERMISSIONS,
          }
        : resolved;
    if (!hasPermission(access.permissions, auth.resource, bit)) {
      const where = auth.scope === "account" ? " on the account" : "";
      throw forbidden(`this needs the '${bit}' permission on '${auth.resource}'${where}`);
    }
    c.set("access", access);
    c.set("logger", c.get("logger").child({ org: access.org.id, actor: access.actor.label }));
    await next();
  };
}

interface Resolved {
  principal: Principal;
  resolved: Access;
  expiresAt: Date | null;
}

/** The database part of authorize(): the credential, the request's organization and the caller's access there. */
async function resolveRequest(
  db: Db,
  token: string,
  jwtKeys: readonly string[],
  rawAccount: string | undefined,
  rawOrg: string | undefined,
  auth: RouteAuthorization,
): Promise<Resolved> {
  const authenticated = await authenticateWithExpiry(db, token, jwtKeys);
  if (!authenticated) throw unauthenticated("invalid or expired token");
  const { principal, expiresAt } = authenticated;
  return { principal, resolved: await resolveFor(db, principal, rawAccount, rawOrg, auth), expiresAt };
}

/** The request's organization (or account) and the principal's access there. */
async function resolveFor(
  db: Db,
  principal: Principal,
  rawAccount: string | undefined,
  rawOrg: string | undefined,
  auth: RouteAuthorization,
): Promise<Access> {
  const pick = (name: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    if (!Uuid.safeParse(text).success) throw invalidField(name, `${name} must be an id (UUID)`);
    return text;
  };
  const accountId = auth.accountParam ? pick(auth.accountParam, rawAccount) : undefined;
  const named = auth.accountParam ? undefined : pick(auth.orgParam ?? "org", rawOrg);
  let resolved: Access | null;
  if (accountId) {
    const orgId = await orgInAccount(db, principal, accountId);
    if (!orgId) throw notFound("account");
    resolved = await resolveAccess(db, principal, orgId);
  } else if (named) resolved = await resolveAccess(db, principal, named);
  else if (principal.kind === "token") resolved = await resolveAccess(db, principal, principal.orgId);
  else {
    // The user's default organization, unless they lost access to it: then their oldest one.
    resolved = principal.defaultOrgId ? await resolveAccess(db, principal, principal.defaultOrgId) : null;
    if (!resolved) {
      const fallback = await defaultOrgOf(db, principal.userId);
      if (!fallback) throw forbidden("you are not a member of any organization");
      resolved = await resolveAccess(db, principal, fallback);
    }
  }
  if (!resolved) throw notFound("organization");
  if (principal.kind === "user") await assertMfaPolicy(db, principal.userId, resolved.org.id);
  return resolved;
}

/** When a JWT (already verified) expires, in epoch ms; 0 (already void) when it carries no expiry. */
function jwtExpiry(token: string): number {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as { exp?: unknown };
    return typeof payload.exp === "number" ? payload.exp * 1000 : 0;
  } catch {
    return 0;
  }
}

/** resolveRequest() through the instance's cache (auth/auth-cache.ts); failures are never cached. */
async function cachedResolve(
  cache: AuthCache,
  db: Db,
  token: string,
  selector: string,
  lookup: () => Promise<Resolved>,
): Promise<{ principal: Principal; resolved: Access }> {
  const key = AuthCache.key(token, selector);
  const now = Date.now();
  const hit = cache.get(key, now);
  if (hit) {
    // The same token string passed its signature check when the entry was made; its expiry (and its
    // session's) bound the entry, and a revocation arrives as an invalidation.
    if (hit.principal.kind === "token" && lastUsedIsStale(hit, now, LAST_USED_RESOLUTION_MS)) {
      hit.lastUsedAt = now;
      await touchAccessToken(db, hit.principal.tokenId);
    }
    return hit;
  }
  const generation = cache.generation();
  const result = await lookup();
  const ends = [result.expiresAt?.getTime(), result.principal.kind === "user" ? jwtExpiry(token) : undefined];
  const known = ends.filter((t): t is number => t !== undefined);
  cache.set(key, generation, {
    principal: result.principal,
    resolved: result.resolved,
    validUntil: known.length ? Math.min(...known) : null,
    lastUsedAt: result.principal.kind === "token" ? now : null,
  });
  return result;
}

/** An organization of the account that the principal can act in (prefers its default). */
async function orgInAccount(db: Db, principal: Principal, accountId: string): Promise<string | null> {
  if (principal.kind === "token") {
    const org = await db
      .selectFrom("organizations")
      .select("id")
      .where("id", "=", principal.orgId)
      .where("account_id", "=", accountId)
      .executeTakeFirst();
    return org?.id ?? null;
  }
  const def = principal.defaultOrgId;
  const rows = await accessibleOrgsQuery(db, principal.userId)
    .select(["o.id"])
    .where("o.account_id", "=", accountId)
    .orderBy("o.created_at")
    .orderBy("o.id")
    .execute();
  return rows.find((r) => r.id === def)?.id ?? rows[0]?.id ?? null;
}
