import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateAccount } from "../../services/accounts.ts";
import { AccountSchema, AccountUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/accounts/{id}",
  operationId: "updateAccount",
  tags: ["accounts"],
  summary: "Change an account (account owners only)",
  auth: { resource: "accounts", scope: "account", accountParam: "id" },
  request: { params: IdParams, body: jsonBody(AccountUpdateSchema) },
  responses: { 200: jsonResponse(AccountSchema, "The updated account") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await updateAccount(requestCtx(c), c.req.valid("json")), 200));
}
