import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteAccessToken } from "../../services/access-tokens.ts";

export const route = defineRoute({
  method: "delete",
  path: "/accesstokens/{id}",
  operationId: "deleteAccessToken",
  tags: ["accesstokens"],
  summary: "Delete an access token (and the keys it created)",
  auth: { resource: "accesstokens" },
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteAccessToken(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
