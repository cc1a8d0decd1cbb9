import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listOrganizations } from "../../services/organizations.ts";
import { OrganizationSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/organizations",
  operationId: "listOrganizations",
  tags: ["organizations"],
  summary: "Organizations the caller can act in",
  description: "Filter and sort keys: id, name, description, group, account, tunnelRange, createdAt.",
  auth: { resource: "organizations" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(OrganizationSchema), "Organizations"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listOrganizations(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
