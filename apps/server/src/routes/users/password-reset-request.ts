import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { requestPasswordReset } from "../../services/accounts/password-reset.ts";
import { PasswordResetRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/password-reset",
  operationId: "requestPasswordReset",
  tags: ["users"],
  summary: "Ask for a password-reset e-mail",
  description:
    "Always 202, at once, whether or not the address has a user: the e-mail (with a single-use token valid for 30 minutes) is sent afterwards, only to an existing user, at most 3 per address per TERN_LOGIN_RATE_WINDOW. Counts against the per-address login limit (429 RATE_LIMITED).",
  auth: "public",
  errors: ["RATE_LIMITED"],
  request: { body: jsonBody(PasswordResetRequestSchema) },
  responses: { 202: { description: "Accepted (the same answer for every address)" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    requestPasswordReset(c.get("deps"), c.req.valid("json").email, {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    return c.body(null, 202);
  });
}
