import { deleteCookie, getCookie } from "hono/cookie";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
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
    "Exchanges the code (PKCE), verifies the ID token (issuer, audience, nonce, signature), requires `email_verified`, matches a member by e-mail or makes a new user of an allowed domain a member with the provider's default role, and answers tokens (or a second-factor challenge for a user with 2FA). The sign-in must finish in the browser that started it (its cookie), within 10 minutes, once. A provider may only sign in users who belong to nothing beyond the organization (or account) it is configured for. Codes: SSO_FAILED (state, cookie, provider error, token checks), SSO_EMAIL_NOT_VERIFIED, SSO_NOT_ALLOWED, SSO_PROVIDER_UNAVAILABLE.",
  auth: "public",
  errors: ["NOT_FOUND", "CONFLICT", "SSO_FAILED", "SSO_EMAIL_NOT_VERIFIED", "SSO_NOT_ALLOWED", "SSO_PROVIDER_UNAVAILABLE"],
  request: { query: SsoCallbackQuerySchema },
  responses: { 200: jsonResponse(LoginResultSchema, "Signed in, or a second-factor challenge") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const binding = getCookie(c, SSO_COOKIE);
    deleteCookie(c, SSO_COOKIE, { path: "/api/sso" });
    const result = await completeSsoLogin(
      c.get("deps"),
      { search: new URL(c.req.url).search, state: query.state, error: query.error, binding },
      { ip: c.get("clientIp"), userAgent: c.req.header("user-agent") ?? "" },
    );
    return c.json(result, 200);
  });
}
