import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteMlPolicy } from "../../services/mlpolicies.ts";

export const route = defineRoute({
  method: "delete",
  path: "/mlpolicies/{id}",
  operationId: "deleteMlPolicy",
  tags: ["mlpolicies"],
  summary: "Delete a multi-link policy that no device runs",
  description: "A policy installed on devices is refused with 409 CONFLICT naming them: uninstall it first.",
  auth: { resource: "mlpolicies" },
  errors: ["CONFLICT"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteMlPolicy(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
