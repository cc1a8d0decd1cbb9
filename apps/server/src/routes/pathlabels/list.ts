import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listPathLabels } from "../../services/path-labels.ts";
import { PathLabelSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/pathlabels",
  operationId: "listPathLabels",
  tags: ["pathlabels"],
  summary: "Path labels of the organization",
  description: "Filter and sort keys: id, name, description, color, type (DIA|Tunnel), createdAt. Default sort: name.",
  auth: { resource: "pathlabels" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(PathLabelSchema), "Path labels"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listPathLabels(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
