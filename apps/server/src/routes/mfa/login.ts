import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { completeSecondFactor } from "../../services/mfa/index.ts";
import { issueSession } from "../../services/sessions.ts";
import { TokenPairSchema } from "../users/schemas.ts";
import { MfaLoginRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/login/mfa",
  operationId: "loginMfa",
  tags: ["users"],
  summary: "Second step of signing in: the challenge and a TOTP code or a recovery code",
  description:
    "After a password (or SSO) sign-in answered `mfaRequired: true`, send its `challenge` with the current `code` of the authenticator app or one unused `recoveryCode`. The challenge is single-use, expires after 5 minutes and dies after 5 wrong codes (401 UNAUTHENTICATED: log in again). A wrong, replayed or used code is 403 MFA_PROOF_INVALID; after 5 wrong codes in a row the user's codes are refused for a back-off that doubles up to 15 minutes (429 RATE_LIMITED with Retry-After).",
  auth: "public",
  errors: ["UNAUTHENTICATED", "MFA_PROOF_INVALID", "RATE_LIMITED"],
  request: { body: jsonBody(MfaLoginRequestSchema) },
  responses: { 200: jsonResponse(TokenPairSchema, "Signed in") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const deps = c.get("deps");
    const userId = await completeSecondFactor(deps, c.req.valid("json"));
    const pair = await issueSession(deps, userId, {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    return c.json(pair, 200);
  });
}
