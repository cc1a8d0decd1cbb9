import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listMembers } from "../../services/members.ts";
import { MembershipSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/members",
  operationId: "listMembers",
  tags: ["members"],
  summary: "Memberships that give access to the organization (on it, and on its account)",
  description: "Filter and sort keys: id, role, scope, user.id, user.email, user.name, createdAt.",
  auth: { resource: "members" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(MembershipSchema), "Memberships"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listMembers(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
