import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { changeRollout } from "../../services/agent-upgrades/rollouts.ts";
import { ROLLOUT_ACT_AUTH, RolloutSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/agent-upgrades/{id}/cancel",
  operationId: "cancelAgentRollout",
  tags: ["agent-upgrades"],
  summary:
    "Cancel a rollout: devices not started are skipped (devices in flight finish); 409 ROLLOUT_CONFLICT from another state",
  auth: ROLLOUT_ACT_AUTH,
  errors: ["ROLLOUT_CONFLICT"],
  request: { params: IdParams },
  responses: { 200: jsonResponse(RolloutSchema, "The rollout") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await changeRollout(requestCtx(c), c.req.valid("param").id, "cancel"), 200));
}
