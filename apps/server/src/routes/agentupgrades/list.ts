import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listRollouts } from "../../services/agent-upgrades/rollouts.ts";
import { ROLLOUT_AUTH, RolloutSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/agent-upgrades",
  operationId: "listAgentRollouts",
  tags: ["agent-upgrades"],
  summary: "The organization's agent rollouts, newest first (at most 500), with their devices counted per state",
  auth: ROLLOUT_AUTH,
  responses: { 200: jsonResponse(z.array(RolloutSchema), "Rollouts") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listRollouts(requestCtx(c)), 200));
}
