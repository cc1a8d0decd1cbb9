import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getVrrpStatus } from "../../services/vrrp-status.ts";
import { VRRP_KEYS, VrrpGroupStatusSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/vrrp/status",
  operationId: "getVrrpStatus",
  tags: ["vrrp"],
  summary: "Each VRRP group with the state its members last reported (MASTER, BACKUP, FAULT, INIT)",
  description: `A member whose device has not reported yet, or is not connected, reads \`unknown\`. ${VRRP_KEYS}`,
  auth: { resource: "vrrp" },
  request: { query: ListQuerySchema },
  responses: {
    200: { ...jsonResponse(z.array(VrrpGroupStatusSchema), "Groups and member states"), headers: recordsTotalHeader },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await getVrrpStatus(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
