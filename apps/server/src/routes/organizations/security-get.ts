import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getOrgSecurity } from "../../services/mfa/index.ts";
import { OrganizationSecuritySchema } from "../mfa/schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/organizations/{id}/security",
  operationId: "getOrganizationSecurity",
  tags: ["organizations"],
  summary: "The organization's sign-in policy (whether members need two-factor sign-in)",
  auth: { resource: "members", orgParam: "id" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(OrganizationSecuritySchema, "The sign-in policy") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getOrgSecurity(requestCtx(c)), 200));
}
