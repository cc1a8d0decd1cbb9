import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { disableMfa } from "../../services/mfa/index.ts";
import { MfaProofRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/me/mfa/disable",
  operationId: "disableMyMfa",
  tags: ["mfa"],
  summary: "Turn two-factor sign-in off (password and a current code or a recovery code)",
  description:
    "Removes the secret and every recovery code. A wrong password or code: 403 MFA_PROOF_INVALID (which one is not said when a code was sent); both count toward the back-off (429 RATE_LIMITED). 409 CONFLICT when 2FA is not enabled. In an organization that requires 2FA you get MFA_REQUIRED there until you enrol again.",
  auth: "user",
  errors: ["CONFLICT", "MFA_PROOF_INVALID", "RATE_LIMITED"],
  request: { body: jsonBody(MfaProofRequestSchema) },
  responses: { 204: { description: "2FA disabled" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const user = c.get("user");
    await disableMfa(c.get("deps"), { id: user.userId, email: user.email }, c.req.valid("json"));
    return c.body(null, 204);
  });
}
