import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getSsoProvider } from "../../services/sso/index.ts";
import { SsoProviderSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/sso/providers/{id}",
  operationId: "getSsoProvider",
  tags: ["sso"],
  summary: "One identity provider (never its client secret)",
  auth: { resource: "members" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(SsoProviderSchema, "The identity provider") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getSsoProvider(requestCtx(c), c.req.valid("param").id), 200));
}
