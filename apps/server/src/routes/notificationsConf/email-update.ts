import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateEmailConf } from "../../services/notifications/settings.ts";
import { EmailConfSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/notificationsConf/email",
  operationId: "updateEmailNotificationsConf",
  tags: ["notificationsConf"],
  summary: "Set the e-mail channel",
  description: "Recipients are e-mail addresses (at most 50, duplicates dropped); an enabled channel needs at least one.",
  auth: { resource: "notificationsConf" },
  request: { body: jsonBody(EmailConfSchema) },
  responses: { 200: jsonResponse(EmailConfSchema, "The e-mail channel") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateEmailConf(requestCtx(c), c.req.valid("json")), 200));
}
