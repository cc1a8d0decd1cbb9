import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { confirmPasswordReset } from "../../services/accounts/password-reset.ts";
import { PasswordResetConfirmSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/password-reset/confirm",
  operationId: "confirmPasswordReset",
  tags: ["users"],
  summary: "Set a new password with the token of a reset e-mail",
  description:
    "The token works once and for 30 minutes (TERN_PASSWORD_RESET_TTL); an unknown, used or expired one is 400 INVALID_TOKEN. Every session and access token of the user is revoked; log in with the new password.",
  auth: "public",
  errors: ["INVALID_TOKEN"],
  request: { body: jsonBody(PasswordResetConfirmSchema) },
  responses: { 204: { description: "Password set; every session and access token revoked" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await confirmPasswordReset(c.get("deps"), c.req.valid("json"), {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    return c.body(null, 204);
  });
}
