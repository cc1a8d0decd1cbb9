import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateOrgSecurity } from "../../services/mfa/index.ts";
import { OrganizationSecuritySchema } from "../mfa/schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/organizations/{id}/security",
  operationId: "updateOrganizationSecurity",
  tags: ["organizations"],
  summary: "Require two-factor sign-in of the organization's members (owners)",
  description:
    "With `requireMfa: true`, members signed in without 2FA get 403 MFA_REQUIRED on every route of this organization until they enrol (their own /users/me/mfa routes stay open). Access tokens are not affected. Turning it on needs 2FA on your own account first (403 MFA_REQUIRED). Audited.",
  auth: { resource: "members", orgParam: "id" },
  errors: ["MFA_REQUIRED"],
  request: { params: IdParams, body: jsonBody(OrganizationSecuritySchema) },
  responses: { 200: jsonResponse(OrganizationSecuritySchema, "The new sign-in policy") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateOrgSecurity(requestCtx(c), c.req.valid("json")), 200));
}
