import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createPathLabel } from "../../services/path-labels.ts";
import { PathLabelCreateSchema, PathLabelSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/pathlabels",
  operationId: "createPathLabel",
  tags: ["pathlabels"],
  summary: "Create a path label (name unique in the organization)",
  auth: { resource: "pathlabels" },
  errors: ["CONFLICT"],
  request: { body: jsonBody(PathLabelCreateSchema) },
  responses: { 201: jsonResponse(PathLabelSchema, "The new path label") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createPathLabel(requestCtx(c), c.req.valid("json")), 201));
}
