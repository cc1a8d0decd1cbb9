import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteMember } from "../../services/members.ts";

export const route = defineRoute({
  method: "delete",
  path: "/members/{id}",
  operationId: "deleteMember",
  tags: ["members"],
  summary: "Remove a membership (an account keeps at least one owner)",
  auth: { resource: "members" },
  errors: ["CONFLICT"],
  request: { params: IdParams },
  responses: { 204: { description: "Removed" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteMember(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
