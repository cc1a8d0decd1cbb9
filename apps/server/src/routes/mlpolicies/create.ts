import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createMlPolicy } from "../../services/mlpolicies.ts";
import { MlPolicyCreateSchema, MlPolicySchema } from "./schemas.ts";

export const POLICY_TEXT =
  "Rules (unique priorities and names) match traffic by source, destination, protocol, ports and DSCP; the action lists path label ids of this organization in preference order. `order: priority` uses the first available path; `order: link-quality` the first whose loss, latency and jitter meet `linkQuality` (defaults 5 %, 300 ms, 50 ms, hold-down 10 s), which only link-quality rules take.";

export const route = defineRoute({
  method: "post",
  path: "/mlpolicies",
  operationId: "createMlPolicy",
  tags: ["mlpolicies"],
  summary: "Create a multi-link policy",
  description: POLICY_TEXT,
  auth: { resource: "mlpolicies" },
  errors: ["CONFLICT"],
  request: { body: jsonBody(MlPolicyCreateSchema) },
  responses: { 201: jsonResponse(MlPolicySchema, "The new policy") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createMlPolicy(requestCtx(c), c.req.valid("json")), 201));
}
