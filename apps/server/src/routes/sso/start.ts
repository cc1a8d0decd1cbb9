import { z } from "@hono/zod-openapi";
import { deleteCookie, setCookie } from "hono/cookie";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { SSO_CONSOLE_COOKIE } from "../../services/console/sso.ts";
import { SSO_COOKIE, SSO_LOGIN_TTL_S, startSsoLogin } from "../../services/sso/index.ts";

const StartQuery = z.object({
  console: z
    .enum(["1"])
    .optional()
    .meta({
      param: { name: "console", in: "query" },
      description: "`1`: started from the web console; the callback sets the console cookie and redirects to `/`",
    }),
});

export const route = defineRoute({
  method: "get",
  path: "/sso/providers/{id}/start",
  operationId: "startSso",
  tags: ["sso"],
  summary: "Start signing in with an identity provider: a redirect to it (PKCE, state, nonce)",
  description:
    "Open this in the browser. It sets a short-lived HttpOnly cookie that binds the sign-in to this browser and redirects (302) to the provider (with `?console=1` the callback signs the web console in instead: cookie and a redirect to `/`), which comes back to GET /sso/callback. 404 for an unknown or disabled provider; 409 CONFLICT when the server has no TERN_PUBLIC_URL; 502 SSO_PROVIDER_UNAVAILABLE when the provider's discovery fails.",
  auth: "public",
  errors: ["NOT_FOUND", "CONFLICT", "SSO_PROVIDER_UNAVAILABLE"],
  request: { params: IdParams, query: StartQuery },
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
    // Only chooses how the callback answers (cookie + redirect instead of JSON), so a plain flag cookie will do.
    if (c.req.valid("query").console === "1")
      setCookie(c, SSO_CONSOLE_COOKIE, "1", {
        httpOnly: true,
        sameSite: "Lax",
        path: "/api/sso",
        maxAge: SSO_LOGIN_TTL_S,
        secure: deps.config.TERN_PUBLIC_URL?.startsWith("https://") ?? false,
      });
    else deleteCookie(c, SSO_CONSOLE_COOKIE, { path: "/api/sso" });
    return c.redirect(url, 302);
  });
}
