import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createRegistrationToken } from "../../services/registration-tokens.ts";
import { RegistrationTokenCreatedSchema, RegistrationTokenCreateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/tokens",
  operationId: "createRegistrationToken",
  tags: ["tokens"],
  summary: "Create a registration token for onboarding devices",
  description:
    "The answer carries the secret (`tern_reg_…`) once; only its hash is stored. `expiresAt` (optional, in the future) ends its use; null = until deleted. Give it to a device's agent, which presents it to POST /api/connect/register.",
  auth: { resource: "tokens" },
  request: { body: jsonBody(RegistrationTokenCreateSchema) },
  responses: { 201: jsonResponse(RegistrationTokenCreatedSchema, "The new token with its secret (shown once)") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createRegistrationToken(requestCtx(c), c.req.valid("json")), 201));
}
