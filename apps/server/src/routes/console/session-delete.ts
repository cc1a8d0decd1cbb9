import { clearConsoleCookie, consoleCookieOf } from "../../auth/console-cookie.ts";
import { cookiePrincipal } from "../../auth/request-principal.ts";
import type { ApiApp } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { consoleSignOut } from "../../services/console/session.ts";

export const route = defineRoute({
  method: "delete",
  path: "/console/session",
  operationId: "deleteConsoleSession",
  tags: ["console"],
  summary: "Sign the web console out: revoke its session and clear the cookie",
  description:
    "Authenticated by the `tern_console` cookie with the X-CSRF-Token header (403 CSRF_FAILED without it, so another site cannot sign the user out); 401 UNAUTHENTICATED without a live console session.",
  auth: "public",
  errors: ["UNAUTHENTICATED", "CSRF_FAILED"],
  responses: { 204: { description: "Signed out, cookie cleared" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const cookie = consoleCookieOf(c);
    if (!cookie) throw new ApiError("UNAUTHENTICATED", "no console session");
    // The cookie's session and its CSRF token (a bearer token is not a console session).
    await cookiePrincipal(c);
    await consoleSignOut(c.get("deps"), cookie);
    clearConsoleCookie(c);
    return c.body(null, 204);
  });
}
