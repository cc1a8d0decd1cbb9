import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateMlPolicy } from "../../services/mlpolicies.ts";
import { POLICY_TEXT } from "./create.ts";
import { MlPolicyChangedSchema, MlPolicyCreateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/mlpolicies/{id}",
  operationId: "updateMlPolicy",
  tags: ["mlpolicies"],
  summary: "Replace a multi-link policy; devices running it get an mlpolicy job each",
  description: `${POLICY_TEXT} The answer carries the ids of the jobs queued for the devices running the policy.`,
  auth: { resource: "mlpolicies" },
  errors: ["CONFLICT"],
  request: { params: IdParams, body: jsonBody(MlPolicyCreateSchema) },
  responses: { 200: jsonResponse(MlPolicyChangedSchema, "The policy and the queued job ids") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateMlPolicy(requestCtx(c), c.req.valid("param").id, c.req.valid("json")), 200));
}
