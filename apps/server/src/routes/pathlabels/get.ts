import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getPathLabel } from "../../services/path-labels.ts";
import { PathLabelSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/pathlabels/{id}",
  operationId: "getPathLabel",
  tags: ["pathlabels"],
  summary: "One path label",
  auth: { resource: "pathlabels" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(PathLabelSchema, "The path label") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getPathLabel(requestCtx(c), c.req.valid("param").id), 200));
}
