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
    "The answer carries the secret (`tern_reg_…`) once; only its hash is stored. `expiresAt` (in the future) ends its use: omitted = the server default lifetime (TERN_REGISTRATION_TOKEN_TTL, 7 days), null = until deleted. `maxUses` (optional) limits the registrations; past it registration answers 403 REGISTRATION_TOKEN_EXHAUSTED. Give it to a device's agent, which presents it to POST /api/connect/register.",
  auth: { resource: "tokens" },
  request: { body: jsonBody(RegistrationTokenCreateSchema) },
  responses: { 201: jsonResponse(RegistrationTokenCreatedSchema, "The new token with its secret (shown once)") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createRegistrationToken(requestCtx(c), c.req.valid("json")), 201));
}
