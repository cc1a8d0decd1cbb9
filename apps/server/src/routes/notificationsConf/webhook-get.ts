import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getWebhookConf } from "../../services/notifications/settings.ts";
import { WebhookConfSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/notificationsConf/webhook",
  operationId: "getWebhookNotificationsConf",
  tags: ["notificationsConf"],
  summary: "Webhook channel: URL, enabled, lowest severity sent, whether a secret is set (never the secret)",
  auth: { resource: "notificationsConf" },
  responses: { 200: jsonResponse(WebhookConfSchema, "The webhook channel") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getWebhookConf(requestCtx(c)), 200));
}
