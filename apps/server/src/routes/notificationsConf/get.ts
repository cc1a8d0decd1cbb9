import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getNotificationRules } from "../../services/notifications/settings.ts";
import { NotificationsConfSchema, RULES_TEXT } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/notificationsConf",
  operationId: "getNotificationsConf",
  tags: ["notificationsConf"],
  summary: "The organization's notification rules, one per event type",
  description: RULES_TEXT,
  auth: { resource: "notificationsConf" },
  responses: { 200: jsonResponse(NotificationsConfSchema, "Every event's rule") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getNotificationRules(requestCtx(c)), 200));
}
