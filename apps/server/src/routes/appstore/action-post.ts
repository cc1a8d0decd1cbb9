import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { runAppAction } from "../../services/appstore.ts";
import { ACTION_TEXT, AppActionRequestSchema, AppActionResultSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/appstore/purchased/{id}/action",
  operationId: "runAppAction",
  tags: ["applications"],
  summary: "Perform an action of a purchased application (body {action, params})",
  description: ACTION_TEXT,
  auth: { resource: "applications", permission: "put" },
  request: { params: IdParams, body: jsonBody(AppActionRequestSchema) },
  responses: { 200: jsonResponse(AppActionResultSchema, "The application after the action, and the action's result") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await runAppAction(requestCtx(c), c.req.valid("param").id, c.req.valid("json")), 200));
}
