import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { testWebhook } from "../../services/notifications/webhook-test.ts";
import { WebhookTestResultSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/notificationsConf/webhook/test",
  operationId: "testWebhookNotificationsConf",
  tags: ["notificationsConf"],
  summary: "Send one signed test delivery to the configured webhook and report what the receiver answered",
  description:
    "Works while the channel is disabled (test before enabling). One attempt, 10 s time-out; `status` is delivered or failed with the reason in `error`.",
  auth: { resource: "notificationsConf" },
  responses: { 200: jsonResponse(WebhookTestResultSchema, "The outcome of the test delivery") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const result = await testWebhook(requestCtx(c));
    return c.json({ ...result, channel: "webhook" as const }, 200);
  });
}
