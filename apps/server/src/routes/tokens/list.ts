import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listRegistrationTokens } from "../../services/registration-tokens.ts";
import { RegistrationTokenSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/tokens",
  operationId: "listRegistrationTokens",
  tags: ["tokens"],
  summary: "Registration tokens of the organization (without their secrets)",
  description: "Filter and sort keys: id, name, expiresAt, uses, createdBy, createdAt. Default sort: createdAt ascending.",
  auth: { resource: "tokens" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(RegistrationTokenSchema), "Registration tokens"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listRegistrationTokens(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
