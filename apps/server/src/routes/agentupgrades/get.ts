import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { rolloutReport } from "../../services/agent-upgrades/rollouts.ts";
import { ROLLOUT_AUTH, RolloutReportSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/agent-upgrades/{id}",
  operationId: "getAgentRollout",
  tags: ["agent-upgrades"],
  summary: "A rollout's report: each device upgraded, rolled back, failed (with why) or skipped",
  auth: ROLLOUT_AUTH,
  request: { params: IdParams },
  responses: { 200: jsonResponse(RolloutReportSchema, "The rollout and its devices") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await rolloutReport(requestCtx(c), c.req.valid("param").id), 200));
}
