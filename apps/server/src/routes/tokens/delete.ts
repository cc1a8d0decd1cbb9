import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteRegistrationToken } from "../../services/registration-tokens.ts";

export const route = defineRoute({
  method: "delete",
  path: "/tokens/{id}",
  operationId: "deleteRegistrationToken",
  tags: ["tokens"],
  summary: "Delete a registration token (devices registered with it stay)",
  auth: { resource: "tokens" },
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteRegistrationToken(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
