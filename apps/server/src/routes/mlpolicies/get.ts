import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getMlPolicy } from "../../services/mlpolicies.ts";
import { MlPolicySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/mlpolicies/{id}",
  operationId: "getMlPolicy",
  tags: ["mlpolicies"],
  summary: "One multi-link policy",
  auth: { resource: "mlpolicies" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(MlPolicySchema, "The policy") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getMlPolicy(requestCtx(c), c.req.valid("param").id), 200));
}
