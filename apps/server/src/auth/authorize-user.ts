/**
 * The middleware of `auth: "user"` routes: the caller's own account (password,
 * own sessions, 2FA). It needs a login session's access JWT; an access token (API
 * key) is refused, since a key must not change how its creator signs in. No
 * organization is resolved: a user whose organizations require 2FA must still
 * reach these routes to enrol.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/env.ts";
import { forbidden } from "../http/errors.ts";
import { requestPrincipal } from "./request-principal.ts";

export function authorizeUser(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { principal } = await requestPrincipal(c);
    if (principal.kind !== "user") throw forbidden("only a signed-in user can do this, not an access token");
    c.set("user", principal);
    c.set("logger", c.get("logger").child({ actor: principal.email }));
    await next();
  };
}
