/**
 * The middleware of `auth: "user"` routes: the caller's own account (password,
 * own sessions, 2FA). It needs a login session's access JWT; an access token (API
 * key) is refused, since a key must not change how its creator signs in. No
 * organization is resolved: a user whose organizations require 2FA must still
 * reach these routes to enrol.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/env.ts";
import { ApiError, forbidden } from "../http/errors.ts";
import { authenticate, bearerToken } from "./authenticate.ts";

const unauthenticated = (message: string) => new ApiError("UNAUTHENTICATED", message, [], { "www-authenticate": "Bearer" });

export function authorizeUser(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { db, keyring } = c.get("deps");
    const token = bearerToken(c.req.header("authorization"));
    if (!token) throw unauthenticated("missing bearer token (Authorization: Bearer <token>)");
    const principal = await authenticate(db, token, keyring.jwtKey);
    if (!principal) throw unauthenticated("invalid or expired token");
    if (principal.kind !== "user") throw forbidden("only a signed-in user can do this, not an access token");
    c.set("user", principal);
    c.set("logger", c.get("logger").child({ actor: principal.email }));
    await next();
  };
}
