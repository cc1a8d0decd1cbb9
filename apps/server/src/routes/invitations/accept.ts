import type { UserPrincipal } from "../../auth/access.ts";
import { authenticate, bearerToken } from "../../auth/authenticate.ts";
import { consoleCookieOf } from "../../auth/console-cookie.ts";
import { cookiePrincipal } from "../../auth/request-principal.ts";
import type { ApiApp } from "../../http/env.ts";
import { ApiError, forbidden } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { acceptInvitation } from "../../services/accounts/invitations.ts";
import { MembershipSchema } from "../members/schemas.ts";
import { InvitationAcceptSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/invitations/accept",
  operationId: "acceptInvitation",
  tags: ["members"],
  summary: "Accept an invitation with the token from its e-mail",
  description:
    "Public, because a new person has no login yet. With `Authorization: Bearer <access JWT>` the signed-in user accepts; their e-mail must be the invited address (403 otherwise). Without it, `password` (and optionally `name`) create the user; when the address already has a user the answer is 401 SIGN_IN_REQUIRED. An unknown, used, revoked or expired token is 400 INVALID_TOKEN; already a member is 409 CONFLICT.",
  auth: "public",
  errors: ["INVALID_TOKEN", "SIGN_IN_REQUIRED", "UNAUTHENTICATED", "FORBIDDEN", "CONFLICT"],
  request: { body: jsonBody(InvitationAcceptSchema) },
  responses: { 201: jsonResponse(MembershipSchema, "The new membership") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    let user: UserPrincipal | null = null;
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const token = bearerToken(header);
      const principal = token ? await authenticate(deps.db, token, deps.keyring.jwtKey) : null;
      if (!principal) throw new ApiError("UNAUTHENTICATED", "invalid or expired token", [], { "www-authenticate": "Bearer" });
      if (principal.kind !== "user") throw forbidden("accept as a signed-in user, not with an access token");
      user = principal;
    } else if (consoleCookieOf(c)) {
      // Signed in to the console: accept as that user (the cookie needs its CSRF token on this POST).
      user = await cookiePrincipal(c);
    }
    return c.json(await acceptInvitation(deps, c.req.valid("json"), user), 201);
  });
}
