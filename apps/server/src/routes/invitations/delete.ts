import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { revokeInvitation } from "../../services/accounts/invitations.ts";

export const route = defineRoute({
  method: "delete",
  path: "/invitations/{id}",
  operationId: "revokeInvitation",
  tags: ["members"],
  summary: "Revoke a pending invitation: its token stops working",
  description: "An account-wide invitation needs an account owner.",
  auth: { resource: "members" },
  request: { params: IdParams },
  responses: { 204: { description: "Revoked" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await revokeInvitation(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
