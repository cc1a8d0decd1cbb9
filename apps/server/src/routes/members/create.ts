import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createMember } from "../../services/members.ts";
import { MembershipCreateSchema, MembershipSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/members",
  operationId: "createMember",
  tags: ["members"],
  summary: "Add a user to the organization or its account with a role",
  description: "The user is created when the e-mail is new (then a password is required). scope=account needs an account owner.",
  auth: { resource: "members" },
  errors: ["CONFLICT"],
  request: { body: jsonBody(MembershipCreateSchema) },
  responses: { 201: jsonResponse(MembershipSchema, "The new membership") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createMember(requestCtx(c), c.req.valid("json")), 201));
}
