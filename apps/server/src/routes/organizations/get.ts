import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getOrganization } from "../../services/organizations.ts";
import { OrganizationSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/organizations/{id}",
  operationId: "getOrganization",
  tags: ["organizations"],
  summary: "One organization, with its tunnel range",
  auth: { resource: "organizations", orgParam: "id" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(OrganizationSchema, "The organization") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getOrganization(requestCtx(c)), 200));
}
