import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { verifySignup } from "../../services/accounts/signup.ts";
import { SignupResultSchema, SignupVerifySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/accounts/signup/verify",
  operationId: "verifySignup",
  tags: ["accounts"],
  summary: "Verify a sign-up's e-mail: creates the trial account, its first organization and the user as its owner",
  description:
    "The token of the verification e-mail works once, until it expires; an unknown, used or expired one (or one for an address that has a user by now) is 400 INVALID_TOKEN. The account is on the `trial` plan: `trial_end` is TERN_TRIAL_DAYS ahead, its limits are TERN_TRIAL_MAX_DEVICES and TERN_TRIAL_MAX_ORGANIZATIONS (403 ACCOUNT_LIMIT beyond them). Sign in with the e-mail and password of the sign-up.",
  auth: "public",
  errors: ["SIGNUP_DISABLED", "INVALID_TOKEN"],
  request: { body: jsonBody(SignupVerifySchema) },
  responses: { 201: jsonResponse(SignupResultSchema, "The account, organization and user created") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const created = await verifySignup(c.get("deps"), c.req.valid("json").token, {
      ip: c.get("clientIp"),
      userAgent: c.req.header("user-agent") ?? "",
    });
    return c.json(created, 201);
  });
}
