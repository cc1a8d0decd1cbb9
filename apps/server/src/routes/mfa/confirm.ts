import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { confirmMfa } from "../../services/mfa/index.ts";
import { MfaConfirmRequestSchema, MfaRecoveryCodesSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/me/mfa/confirm",
  operationId: "confirmMyMfa",
  tags: ["mfa"],
  summary: "Finish enrolment with a code from the app: 2FA is on, recovery codes shown once",
  description:
    "From now on a password sign-in answers a second-factor challenge. The 10 recovery codes in the answer are shown only here; each opens one sign-in without the app. 409 CONFLICT when no enrolment is pending.",
  auth: "user",
  errors: ["CONFLICT", "MFA_PROOF_INVALID", "RATE_LIMITED"],
  request: { body: jsonBody(MfaConfirmRequestSchema) },
  responses: { 200: jsonResponse(MfaRecoveryCodesSchema, "2FA enabled; the recovery codes (shown once)") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const user = c.get("user");
    return c.json(await confirmMfa(c.get("deps"), { id: user.userId, email: user.email }, c.req.valid("json").code), 200);
  });
}
