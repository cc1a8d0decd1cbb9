import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getDefaultNotificationsConf } from "../../services/notifications/settings.ts";
import { DefaultNotificationsConfSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/notificationsConf/default",
  operationId: "getDefaultNotificationsConf",
  tags: ["notificationsConf"],
  summary: "The account's default rules and e-mail settings, copied into each new organization",
  description: "Until the account sets one, the built-in defaults (RTT 300/600 ms, drop rate 5/20 %, …).",
  auth: { resource: "notificationsConf" },
  responses: { 200: jsonResponse(DefaultNotificationsConfSchema, "The account's default") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getDefaultNotificationsConf(requestCtx(c)), 200));
}
