import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listAgentPackages } from "../../services/agent-upgrades/packages.ts";
import { ACCOUNT_AUTH, AgentPackageSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/agent-packages",
  operationId: "listAgentPackages",
  tags: ["agent-upgrades"],
  summary: "The account's agent packages, newest first (account managers and owners)",
  auth: ACCOUNT_AUTH,
  responses: { 200: jsonResponse(z.array(AgentPackageSchema), "Agent packages") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listAgentPackages(requestCtx(c)), 200));
}
