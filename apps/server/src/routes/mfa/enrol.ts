import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { enrolMfa } from "../../services/mfa/index.ts";
import { MfaEnrolmentSchema, MfaEnrolRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/me/mfa/enrol",
  operationId: "enrolMyMfa",
  tags: ["mfa"],
  summary: "Start two-factor enrolment: a new TOTP secret, shown only in this answer",
  description:
    "Needs your `password` (unless your account was created by single sign-on and has none; wrong passwords are backed off like wrong codes). Answers the base32 secret and an otpauth:// URI for an authenticator app (show it as a QR code). Nothing changes at sign-in until POST /users/me/mfa/confirm with a valid code. Enrolling again before confirming replaces the secret; 409 CONFLICT when 2FA is already enabled.",
  auth: "user",
  errors: ["CONFLICT", "RATE_LIMITED"],
  request: { body: jsonBody(MfaEnrolRequestSchema) },
  responses: { 201: jsonResponse(MfaEnrolmentSchema, "The new secret (shown once)") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const user = c.get("user");
    return c.json(await enrolMfa(c.get("deps"), { id: user.userId, email: user.email }, c.req.valid("json")), 201);
  });
}
