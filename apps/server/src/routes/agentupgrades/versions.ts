import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { agentVersions } from "../../services/agent-upgrades/rollouts.ts";
import { AgentVersionCountSchema, ROLLOUT_AUTH } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/agent-versions",
  operationId: "listAgentVersions",
  tags: ["agent-upgrades"],
  summary: "Which agent versions the organization's devices run (as they said at their last hello), with counts",
  description: 'The devices of one version: GET /devices?filter=[{"key":"versions.agent","op":"==","val":"<version>"}].',
  auth: ROLLOUT_AUTH,
  responses: { 200: jsonResponse(z.array(AgentVersionCountSchema), "Versions and their devices") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await agentVersions(requestCtx(c)), 200));
}
