import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateSsoProvider } from "../../services/sso/index.ts";
import { SsoProviderSchema, SsoProviderUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/sso/providers/{id}",
  operationId: "updateSsoProvider",
  tags: ["sso"],
  summary: "Change an identity provider (owners); fields not given stay",
  auth: { resource: "members" },
  errors: ["CONFLICT"],
  request: { params: IdParams, body: jsonBody(SsoProviderUpdateSchema) },
  responses: { 200: jsonResponse(SsoProviderSchema, "The changed identity provider") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) =>
    c.json(await updateSsoProvider(requestCtx(c), c.req.valid("param").id, c.req.valid("json")), 200),
  );
}
