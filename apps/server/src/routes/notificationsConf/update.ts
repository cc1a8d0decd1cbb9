import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateNotificationRules } from "../../services/notifications/settings.ts";
import { NotificationsConfSchema, RULES_TEXT } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/notificationsConf",
  operationId: "updateNotificationsConf",
  tags: ["notificationsConf"],
  summary: "Change the organization's notification rules",
  description: RULES_TEXT,
  auth: { resource: "notificationsConf" },
  request: { body: jsonBody(NotificationsConfSchema) },
  responses: { 200: jsonResponse(NotificationsConfSchema, "Every event's rule after the change") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateNotificationRules(requestCtx(c), c.req.valid("json")), 200));
}
