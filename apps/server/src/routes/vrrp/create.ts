import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createVrrpGroup } from "../../services/vrrp.ts";
import { VRRP_RULES, VrrpGroupChangedSchema, VrrpGroupCreateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/vrrp",
  operationId: "createVrrpGroup",
  tags: ["vrrp"],
  summary: "Create a VRRP group; its members get a vrrp job each",
  description: VRRP_RULES,
  auth: { resource: "vrrp" },
  errors: ["CONFLICT"],
  request: { body: jsonBody(VrrpGroupCreateSchema) },
  responses: { 201: jsonResponse(VrrpGroupChangedSchema, "The new group and the queued job ids") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createVrrpGroup(requestCtx(c), c.req.valid("json")), 201));
}
