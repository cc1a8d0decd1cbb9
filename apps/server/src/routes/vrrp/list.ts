import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listVrrpGroups } from "../../services/vrrp.ts";
import { VRRP_KEYS, VrrpGroupSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/vrrp",
  operationId: "listVrrpGroups",
  tags: ["vrrp"],
  summary: "VRRP groups of the organization with their members",
  description: VRRP_KEYS,
  auth: { resource: "vrrp" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(VrrpGroupSchema), "VRRP groups"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listVrrpGroups(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
