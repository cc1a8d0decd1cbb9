import { deleteCookie, getCookie } from "hono/cookie";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { finishConsoleSso, SSO_CONSOLE_COOKIE } from "../../services/console/sso.ts";
import { completeSsoLogin, SSO_COOKIE } from "../../services/sso/index.ts";
import { LoginResultSchema } from "../mfa/schemas.ts";
import { SsoCallbackQuerySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/sso/callback",
  operationId: "ssoCallback",
  tags: ["sso"],
  summary: "Where the identity provider sends the browser back: answers a session like a password login",
  description:
    "Exchanges the code (PKCE), verifies the ID token (issuer, audience, nonce, signature), requires `email_verified`, matches a member by e-mail or makes a new user of an allowed domain a member with the provider's default role, and answers tokens (or a second-factor challenge for a user with 2FA). The sign-in must finish in the browser that started it (its cookie), within 10 minutes, once. A provider may only sign in users who belong to nothing beyond the organization (or account) it is configured for. Started with `?console=1`: sets the console cookie and redirects (302) to `/` instead; a second-factor challenge goes to `/signin#mfaChallenge=<challenge>` (finish with POST /console/session), a failure to `/signin?ssoError=<CODE>`. Codes: SSO_FAILED (state, cookie, provider error, token checks), SSO_EMAIL_NOT_VERIFIED, SSO_NOT_ALLOWED, SSO_PROVIDER_UNAVAILABLE.",
  auth: "public",
  errors: ["NOT_FOUND", "CONFLICT", "SSO_FAILED", "SSO_EMAIL_NOT_VERIFIED", "SSO_NOT_ALLOWED", "SSO_PROVIDER_UNAVAILABLE"],
  request: { query: SsoCallbackQuerySchema },
  responses: {
    200: jsonResponse(LoginResultSchema, "Signed in, or a second-factor challenge"),
    302: {
      description: "Started from the console (`?console=1`): back into the console",
      headers: { location: { schema: { type: "string" }, description: "`/`, or the console's sign-in page" } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const binding = getCookie(c, SSO_COOKIE);
    deleteCookie(c, SSO_COOKIE, { path: "/api/sso" });
    const fromConsole = getCookie(c, SSO_CONSOLE_COOKIE) === "1";
    const signIn = completeSsoLogin(
      c.get("deps"),
      { search: new URL(c.req.url).search, state: query.state, error: query.error, binding },
      { ip: c.get("clientIp"), userAgent: c.req.header("user-agent") ?? "" },
    );
    if (fromConsole) {
      deleteCookie(c, SSO_CONSOLE_COOKIE, { path: "/api/sso" });
      return c.redirect(await finishConsoleSso(c, signIn), 302) as never;
    }
    return c.json(await signIn, 200);
  });
}
