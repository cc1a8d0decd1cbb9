/**
 * The middleware of routes about the signed-in user themself (auth: "user"),
 * such as their own two-factor settings: a session of a user, not an access
 * token (a key must never change how its creator signs in), and no
 * organization: a user whose organizations require 2FA must still reach these
 * routes to enrol.
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
