import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updatePathLabel } from "../../services/path-labels.ts";
import { PathLabelCreateSchema, PathLabelSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/pathlabels/{id}",
  operationId: "updatePathLabel",
  tags: ["pathlabels"],
  summary: "Change a path label's name, description, colour or type",
  description: "Interfaces, tunnels and policies refer to the label by id, so no device configuration changes.",
  auth: { resource: "pathlabels" },
  errors: ["CONFLICT"],
  request: { params: IdParams, body: jsonBody(PathLabelCreateSchema) },
  responses: { 200: jsonResponse(PathLabelSchema, "The path label") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) =>
    c.json(await updatePathLabel(requestCtx(c), c.req.valid("param").id, c.req.valid("json")), 200),
  );
}
