import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getEmailConf } from "../../services/notifications/settings.ts";
import { EmailConfSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/notificationsConf/email",
  operationId: "getEmailNotificationsConf",
  tags: ["notificationsConf"],
  summary: "E-mail channel: enabled, recipients, lowest severity e-mailed",
  auth: { resource: "notificationsConf" },
  responses: { 200: jsonResponse(EmailConfSchema, "The e-mail channel") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getEmailConf(requestCtx(c)), 200));
}
