import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteOrganization } from "../../services/organizations.ts";

export const route = defineRoute({
  method: "delete",
  path: "/organizations/{id}",
  operationId: "deleteOrganization",
  tags: ["organizations"],
  summary: "Delete an organization and everything in it (account owners; not the account's last one)",
  auth: { resource: "organizations", scope: "account", orgParam: "id" },
  errors: ["CONFLICT"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteOrganization(requestCtx(c));
    return c.body(null, 204);
  });
}
