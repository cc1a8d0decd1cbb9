import { setCookie } from "hono/cookie";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { SSO_COOKIE, SSO_LOGIN_TTL_S, startSsoLogin } from "../../services/sso/index.ts";

export const route = defineRoute({
  method: "get",
  path: "/sso/providers/{id}/start",
  operationId: "startSso",
  tags: ["sso"],
  summary: "Start signing in with an identity provider: a redirect to it (PKCE, state, nonce)",
  description:
    "Open this in the browser. It sets a short-lived HttpOnly cookie that binds the sign-in to this browser and redirects (302) to the provider, which comes back to GET /sso/callback. 404 for an unknown or disabled provider; 409 CONFLICT when the server has no TERN_PUBLIC_URL; 502 SSO_PROVIDER_UNAVAILABLE when the provider's discovery fails.",
  auth: "public",
  errors: ["NOT_FOUND", "CONFLICT", "SSO_PROVIDER_UNAVAILABLE"],
  request: { params: IdParams },
  responses: {
    302: {
      description: "Redirect to the identity provider",
      headers: { location: { schema: { type: "string" }, description: "The provider's authorization URL" } },
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const { url, binding } = await startSsoLogin(deps, c.req.valid("param").id);
    setCookie(c, SSO_COOKIE, binding, {
      httpOnly: true,
      sameSite: "Lax",
      path: "/api/sso",
      maxAge: SSO_LOGIN_TTL_S,
      secure: deps.config.TERN_PUBLIC_URL?.startsWith("https://") ?? false,
    });
    return c.redirect(url, 302);
  });
}
