import { jobsLocationHeader, locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateOrganization } from "../../services/organizations.ts";
import { OrganizationSchema, OrganizationUpdatedSchema, OrganizationUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/organizations/{id}",
  operationId: "updateOrganization",
  tags: ["organizations"],
  summary: "Change an organization, including its tunnel range",
  description:
    "A new tunnelRange must be a network of /24 or larger that holds every tunnel number in use (TUNNEL_RANGE_EXHAUSTED), overlaps no LAN subnet or LAN NAT prefix of the organization's devices (LAN_OVERLAPPING) nor a WAN subnet, and no static route or BGP neighbour may point at a loopback of the current range (VALIDATION_FAILED). Then the tunnels are re-addressed: same numbers, loopbacks from the new range; every device with a tunnel is recompiled and the answer is 202 with their `organization` jobs in jobIds (Location lists them). Without device jobs the answer is 200.",
  auth: { resource: "organizations", orgParam: "id" },
  errors: ["CONFLICT", "LAN_OVERLAPPING", "TUNNEL_RANGE_EXHAUSTED"],
  request: { params: IdParams, body: jsonBody(OrganizationUpdateSchema) },
  responses: {
    200: jsonResponse(OrganizationSchema, "The updated organization"),
    202: {
      ...jsonResponse(
        OrganizationUpdatedSchema,
        "The updated organization; its tunnels are being re-addressed by the jobs in jobIds",
      ),
      headers: jobsLocationHeader,
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { jobIds, ...organization } = await updateOrganization(requestCtx(c), c.req.valid("json"));
    return jobIds.length ? c.json({ ...organization, jobIds }, 202, locationOfJobs(c, jobIds)) : c.json(organization, 200);
  });
}
