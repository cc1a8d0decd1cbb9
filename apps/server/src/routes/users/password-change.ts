import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { changePassword } from "../../services/accounts/password-change.ts";
import { PasswordChangeSchema, TokenPairSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/password",
  operationId: "changePassword",
  tags: ["users"],
  summary: "Change your own password (the current one required)",
  description:
    "Every session and access token of the user is revoked, this request's session included; the answer is a fresh session (token pair) to go on with. A wrong current password is 400 VALIDATION_FAILED on `currentPassword`, throttled like a login (429 RATE_LIMITED). Needs a login session, not an access token.",
  auth: "user",
  errors: ["RATE_LIMITED"],
  request: { body: jsonBody(PasswordChangeSchema) },
  responses: { 200: jsonResponse(TokenPairSchema, "Changed; a fresh session") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const pair = await changePassword(c.get("deps"), c.get("user"), c.req.valid("json"), {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    return c.json(pair, 200);
  });
}
