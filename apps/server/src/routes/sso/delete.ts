import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteSsoProvider } from "../../services/sso/index.ts";

export const route = defineRoute({
  method: "delete",
  path: "/sso/providers/{id}",
  operationId: "deleteSsoProvider",
  tags: ["sso"],
  summary: "Remove an identity provider (owners); its users keep their memberships and sessions",
  auth: { resource: "members" },
  request: { params: IdParams },
  responses: { 204: { description: "Removed" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteSsoProvider(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
