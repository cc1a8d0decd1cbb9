import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listAccounts } from "../../services/accounts.ts";
import { AccountSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/accounts",
  operationId: "listAccounts",
  tags: ["accounts"],
  summary: "Accounts the caller belongs to (with trial_end)",
  auth: { resource: "accounts" },
  responses: { 200: jsonResponse(z.array(AccountSchema), "Accounts") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listAccounts(requestCtx(c)), 200));
}
