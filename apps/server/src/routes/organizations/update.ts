import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateOrganization } from "../../services/organizations.ts";
import { OrganizationSchema, OrganizationUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/organizations/{id}",
  operationId: "updateOrganization",
  tags: ["organizations"],
  summary: "Change an organization, including its tunnel range",
  description:
    "A new tunnelRange must be a network of /24 or larger and must not overlap the LAN subnets of the organization's devices (LAN_OVERLAPPING).",
  auth: { resource: "organizations", orgParam: "id" },
  errors: ["CONFLICT", "LAN_OVERLAPPING"],
  request: { params: IdParams, body: jsonBody(OrganizationUpdateSchema) },
  responses: { 200: jsonResponse(OrganizationSchema, "The updated organization") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateOrganization(requestCtx(c), c.req.valid("json")), 200));
}
