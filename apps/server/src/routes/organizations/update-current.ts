/**
 * PUT /organizations: the spec's bare path (endpoints table: "GET, PUT
 * /organizations … tunnel range parameter"). It changes the organization the
 * request acts in, `?org` or the caller's default (a key: its own), with the
 * same body, checks and answers as PUT /organizations/{id}.
 */
import { locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { updateOrganization } from "../../services/organizations.ts";
import { OrganizationUpdateSchema } from "./schemas.ts";
import { route as updateById } from "./update.ts";

export const route = defineRoute({
  method: "put",
  path: "/organizations",
  operationId: "updateCurrentOrganization",
  tags: ["organizations"],
  summary: "Change the current organization (`org`, or the caller's default), including its tunnel range",
  description: `The organization is the one the request acts in: the \`org\` query parameter, else the caller's default organization (an access token: its own). Otherwise as PUT /organizations/{id}. ${updateById.description}`,
  auth: { resource: "organizations" },
  errors: ["CONFLICT", "LAN_OVERLAPPING", "TUNNEL_RANGE_EXHAUSTED"],
  request: { body: jsonBody(OrganizationUpdateSchema) },
  responses: { 200: updateById.responses[200], 202: updateById.responses[202] },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds, ...organization } = await updateOrganization(requestCtx(c), c.req.valid("json"));
    return jobIds.length ? c.json({ ...organization, jobIds }, 202, locationOfJobs(c, jobIds)) : c.json(organization, 200);
  });
}
