import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listOwnSessions } from "../../services/accounts/user-sessions.ts";
import { SessionSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/users/sessions",
  operationId: "listOwnSessions",
  tags: ["users"],
  summary: "Your own active login sessions, newest first (`current`: this request's)",
  auth: "user",
  responses: { 200: jsonResponse(z.array(SessionSchema), "Active sessions") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listOwnSessions(c.get("deps").db, c.get("user")), 200));
}
