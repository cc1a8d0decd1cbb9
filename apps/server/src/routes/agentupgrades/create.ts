import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createRollout } from "../../services/agent-upgrades/rollouts.ts";
import { ROLLOUT_AUTH, RolloutCreateSchema, RolloutSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/agent-upgrades",
  operationId: "createAgentRollout",
  tags: ["agent-upgrades"],
  summary: "Upgrade the agents of devices to a package, canaries first, then in batches",
  description:
    "Targets devices by `deviceIds` or by `filter` (the device selection's keys, e.g. `versions.agent`). Devices already on the version are `skipped`. The server starts the canaries (`canaryPercent` of the devices, at least one), then batches of `batchSize`, each only once the previous is done, and only inside `window` (daily, UTC) when given. A canary that rolls back or is not back healthy within `healthTimeoutSec` pauses the rollout. Follow it with GET /agent-upgrades/{id} or the live events (`upgrade`).",
  auth: ROLLOUT_AUTH,
  request: { body: jsonBody(RolloutCreateSchema) },
  responses: { 201: jsonResponse(RolloutSchema, "The rollout") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createRollout(requestCtx(c), c.req.valid("json")), 201));
}
