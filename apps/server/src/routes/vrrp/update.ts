import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateVrrpGroup } from "../../services/vrrp.ts";
import { VRRP_RULES, VrrpGroupChangedSchema, VrrpGroupCreateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/vrrp/{id}",
  operationId: "updateVrrpGroup",
  tags: ["vrrp"],
  summary: "Replace a VRRP group; old and new members get a vrrp job each",
  description: VRRP_RULES,
  auth: { resource: "vrrp" },
  errors: ["CONFLICT"],
  request: { params: IdParams, body: jsonBody(VrrpGroupCreateSchema) },
  responses: { 200: jsonResponse(VrrpGroupChangedSchema, "The group and the queued job ids") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) =>
    c.json(await updateVrrpGroup(requestCtx(c), c.req.valid("param").id, c.req.valid("json")), 200),
  );
}
