import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { purchaseApp } from "../../services/appstore.ts";
import { AppIdParams, PurchasedAppSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/appstore/purchase/{id}",
  operationId: "purchaseApp",
  tags: ["applications"],
  summary: "Purchase a catalog application for the organization (once per organization)",
  auth: { resource: "applications" },
  errors: ["CONFLICT"],
  request: { params: AppIdParams },
  responses: { 201: jsonResponse(PurchasedAppSchema, "The purchased application") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await purchaseApp(requestCtx(c), c.req.valid("param").id), 201));
}
