import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listSigningKeys } from "../../services/agent-upgrades/keys.ts";
import { ACCOUNT_AUTH, AgentSigningKeySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/agent-signing-keys",
  operationId: "listAgentSigningKeys",
  tags: ["agent-upgrades"],
  summary: "The public keys agent packages of the account may be signed with (account managers and owners)",
  auth: ACCOUNT_AUTH,
  responses: { 200: jsonResponse(z.array(AgentSigningKeySchema), "Signing keys") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listSigningKeys(requestCtx(c)), 200));
}
