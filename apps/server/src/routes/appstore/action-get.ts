import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { runAppAction } from "../../services/appstore.ts";
import { ACTION_TEXT, ActionQuery, AppActionResultSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/appstore/purchased/{id}/action",
  operationId: "runAppActionGet",
  tags: ["applications"],
  summary: "Perform an action of a purchased application (the spec's GET form; params as query fields)",
  description: `Every query field besides \`action\` and \`org\` is a param, e.g. \`?action=updateCertificate&validityDays=90\`. ${ACTION_TEXT}`,
  auth: { resource: "applications", permission: "put" },
  request: { params: IdParams, query: ActionQuery },
  responses: { 200: jsonResponse(AppActionResultSchema, "The application after the action, and the action's result") },
});

/** Query fields that are not action params. */
const RESERVED = new Set(["action", "org"]);

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const params = Object.fromEntries(Object.entries(c.req.query()).filter(([k]) => !RESERVED.has(k)));
    const result = await runAppAction(requestCtx(c), c.req.valid("param").id, { action: c.req.valid("query").action, params });
    return c.json(result, 200);
  });
}
