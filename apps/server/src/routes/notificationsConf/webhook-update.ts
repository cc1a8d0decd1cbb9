import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateWebhookConf } from "../../services/notifications/settings.ts";
import { WebhookConfSchema, WebhookConfUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/notificationsConf/webhook",
  operationId: "updateWebhookNotificationsConf",
  tags: ["notificationsConf"],
  summary: "Set the webhook channel",
  description:
    "Deliveries are JSON POSTs signed with HMAC-SHA256 of the body (`x-tern-signature: sha256=<hex>`). `secret` (16-200 characters) is write-only: stored encrypted, never returned; omit it to keep the current one. An enabled webhook needs a URL and a secret. The URL may not carry credentials, nor point at loopback, link-local, cloud metadata, reserved or (unless the server allows them) private addresses, directly or through DNS: `400 WEBHOOK_TARGET_FORBIDDEN`; each delivery checks the addresses it connects to again.",
  auth: { resource: "notificationsConf" },
  request: { body: jsonBody(WebhookConfUpdateSchema) },
  responses: { 200: jsonResponse(WebhookConfSchema, "The webhook channel") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateWebhookConf(requestCtx(c), c.req.valid("json")), 200));
}
