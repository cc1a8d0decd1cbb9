import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listInvitations } from "../../services/accounts/invitations.ts";
import { InvitationSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/invitations",
  operationId: "listInvitations",
  tags: ["members"],
  summary: "Pending invitations to the organization and to its account",
  description:
    "Accepted, revoked and expired invitations are not listed. Filter and sort keys: id, email, role, scope, invitedBy, expiresAt, createdAt.",
  auth: { resource: "members" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(InvitationSchema), "Pending invitations"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listInvitations(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
