import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getPurchasedApp } from "../../services/appstore.ts";
import { PurchasedAppSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/appstore/purchased/{id}",
  operationId: "getPurchasedApp",
  tags: ["applications"],
  summary: "One purchased application with its state (secrets left out)",
  auth: { resource: "applications" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(PurchasedAppSchema, "The purchased application") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getPurchasedApp(requestCtx(c), c.req.valid("param").id), 200));
}
