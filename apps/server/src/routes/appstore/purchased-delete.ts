import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deletePurchasedApp } from "../../services/appstore.ts";

export const route = defineRoute({
  method: "delete",
  path: "/appstore/purchased/{id}",
  operationId: "deletePurchasedApp",
  tags: ["applications"],
  summary: "Remove a purchased application and its state (certificates, snapshots)",
  auth: { resource: "applications" },
  request: { params: IdParams },
  responses: { 204: { description: "Removed" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deletePurchasedApp(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
