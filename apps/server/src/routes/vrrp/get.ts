import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getVrrpGroup } from "../../services/vrrp.ts";
import { VrrpGroupSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/vrrp/{id}",
  operationId: "getVrrpGroup",
  tags: ["vrrp"],
  summary: "One VRRP group",
  auth: { resource: "vrrp" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(VrrpGroupSchema, "The group") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getVrrpGroup(requestCtx(c), c.req.valid("param").id), 200));
}
