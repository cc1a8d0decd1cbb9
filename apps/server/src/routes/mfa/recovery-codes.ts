import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { regenerateRecoveryCodes } from "../../services/mfa/index.ts";
import { MfaProofRequestSchema, MfaRecoveryCodesSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/me/mfa/recovery-codes",
  operationId: "regenerateMyRecoveryCodes",
  tags: ["mfa"],
  summary: "New recovery codes (the old ones stop working); password and a current code or a recovery code",
  auth: "user",
  errors: ["CONFLICT", "MFA_PROOF_INVALID", "RATE_LIMITED"],
  request: { body: jsonBody(MfaProofRequestSchema) },
  responses: { 200: jsonResponse(MfaRecoveryCodesSchema, "The new recovery codes (shown once)") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const user = c.get("user");
    return c.json(await regenerateRecoveryCodes(c.get("deps"), { id: user.userId, email: user.email }, c.req.valid("json")), 200);
  });
}
