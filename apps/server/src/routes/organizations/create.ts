import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createOrganization } from "../../services/organizations.ts";
import { OrganizationCreateSchema, OrganizationSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/organizations",
  operationId: "createOrganization",
  tags: ["organizations"],
  summary: "Create an organization in the caller's account (account owners)",
  description: "tunnelRange defaults to 10.100.0.0/16 and must be a network of /24 or larger.",
  auth: { resource: "organizations", scope: "account" },
  errors: ["CONFLICT", "ACCOUNT_LIMIT"],
  request: { body: jsonBody(OrganizationCreateSchema) },
  responses: { 201: jsonResponse(OrganizationSchema, "The new organization") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createOrganization(requestCtx(c), c.req.valid("json")), 201));
}
