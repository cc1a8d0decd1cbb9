import { authenticateConsoleCookie, consoleCookieOf } from "../../auth/console-cookie.ts";
import type { ApiApp } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { consoleSessionView } from "../../services/console/session.ts";
import { ConsoleSessionSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/console/session",
  operationId: "getConsoleSession",
  tags: ["console"],
  summary: "The web console's session (from its cookie) with a fresh CSRF token",
  description:
    "Authenticated by the `tern_console` cookie only (declared public because it takes no bearer token): 401 UNAUTHENTICATED without a live console session. Every CSRF token handed out for the session stays valid until the session ends.",
  auth: "public",
  errors: ["UNAUTHENTICATED"],
  responses: { 200: jsonResponse(ConsoleSessionSchema, "The signed-in console session") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const cookie = consoleCookieOf(c);
    const user = cookie ? await authenticateConsoleCookie(deps.db, cookie) : null;
    if (!user) throw new ApiError("UNAUTHENTICATED", "no console session; sign in");
    return c.json(await consoleSessionView(deps, user), 200);
  });
}
