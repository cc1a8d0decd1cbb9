import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listMlPolicies } from "../../services/mlpolicies.ts";
import { MlPolicySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/mlpolicies",
  operationId: "listMlPolicies",
  tags: ["mlpolicies"],
  summary: "Multi-link policies, each with the number of devices running it",
  description: "Filter and sort keys: id, name, description, installedOn, createdAt, updatedAt. Default sort: name.",
  auth: { resource: "mlpolicies" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(MlPolicySchema), "Multi-link policies"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listMlPolicies(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
