import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateDefaultNotificationsConf } from "../../services/notifications/settings.ts";
import { DefaultNotificationsConfSchema, RULES_TEXT } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/notificationsConf/default",
  operationId: "updateDefaultNotificationsConf",
  tags: ["notificationsConf"],
  summary: "Set the account's default rules and e-mail settings (account owners and managers)",
  description: `Applies to organizations created afterwards; existing organizations keep their configuration. ${RULES_TEXT} The e-mail settings are replaced.`,
  auth: { resource: "notificationsConf", scope: "account" },
  request: { body: jsonBody(DefaultNotificationsConfSchema) },
  responses: { 200: jsonResponse(DefaultNotificationsConfSchema, "The account's default after the change") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateDefaultNotificationsConf(requestCtx(c), c.req.valid("json")), 200));
}
