import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { login } from "../../services/sessions.ts";
import { LoginResultSchema } from "../mfa/schemas.ts";
import { LoginRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/login",
  operationId: "login",
  tags: ["users"],
  summary: "Log in with e-mail (case sensitive) and password",
  description:
    "Answers a short-lived access JWT and a refresh token. Rate limited per client IP and per username (429 RATE_LIMITED with Retry-After). A user with two-factor sign-in gets `mfaRequired: true` and a single-use `challenge` instead: finish with POST /users/login/mfa.",
  auth: "public",
  errors: ["UNAUTHENTICATED", "RATE_LIMITED"],
  request: { body: jsonBody(LoginRequestSchema) },
  responses: { 200: jsonResponse(LoginResultSchema, "Logged in, or a second-factor challenge") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const pair = await login(c.get("deps"), c.req.valid("json"), {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    return c.json(pair, 200);
  });
}
