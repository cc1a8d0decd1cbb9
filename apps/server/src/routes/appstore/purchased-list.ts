import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listPurchasedApps } from "../../services/appstore.ts";
import { PurchasedAppSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/appstore/purchased",
  operationId: "listPurchasedApps",
  tags: ["applications"],
  summary: "Applications the organization purchased",
  description: "Filter and sort keys: id, app (catalog id), purchasedAt. Default sort: purchasedAt.",
  auth: { resource: "applications" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(PurchasedAppSchema), "Purchased applications"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listPurchasedApps(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
