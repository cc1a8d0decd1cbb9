import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listAccessTokens } from "../../services/access-tokens.ts";
import { AccessTokenSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/accesstokens",
  operationId: "listAccessTokens",
  tags: ["accesstokens"],
  summary: "Access tokens of the organization, with role and permission masks (never the secret)",
  description: "Filter and sort keys: id, name, role, creator, createdAt, lastUsedAt.",
  auth: { resource: "accesstokens" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(AccessTokenSchema), "Access tokens"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listAccessTokens(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
