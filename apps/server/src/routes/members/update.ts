import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateMember } from "../../services/members.ts";
import { MembershipSchema, MembershipUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/members/{id}",
  operationId: "updateMember",
  tags: ["members"],
  summary: "Change a member's role (an account keeps at least one owner)",
  auth: { resource: "members" },
  errors: ["CONFLICT"],
  request: { params: IdParams, body: jsonBody(MembershipUpdateSchema) },
  responses: { 200: jsonResponse(MembershipSchema, "The changed membership") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateMember(requestCtx(c), c.req.valid("param").id, c.req.valid("json")), 200));
}
