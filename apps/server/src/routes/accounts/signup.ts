import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { requestSignup } from "../../services/accounts/signup.ts";
import { SignupRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/accounts/signup",
  operationId: "signup",
  tags: ["accounts"],
  summary: "Sign up for a trial account (shared SaaS option; off unless TERN_SIGNUP_ENABLED)",
  description:
    "Always 202, at once, whatever the address: a new address gets an e-mail with a single-use verification token (TERN_SIGNUP_VERIFY_TTL, 24 hours); an address that already has a user gets an e-mail saying so, and nothing is created. At most 3 e-mails per address per TERN_LOGIN_RATE_WINDOW; counts against the per-client-address login limit (429 RATE_LIMITED). 403 SIGNUP_DISABLED when sign-up is off (the self-hosting default), 503 EMAIL_UNAVAILABLE without an SMTP server.",
  auth: "public",
  errors: ["SIGNUP_DISABLED", "EMAIL_UNAVAILABLE", "RATE_LIMITED"],
  request: { body: jsonBody(SignupRequestSchema) },
  responses: { 202: { description: "Accepted (the same answer for every address)" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    requestSignup(c.get("deps"), c.req.valid("json"), { ip: c.get("clientIp"), userAgent: c.req.header("user-agent") ?? "" });
    return c.body(null, 202);
  });
}
