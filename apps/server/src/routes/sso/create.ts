import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createSsoProvider } from "../../services/sso/index.ts";
import { SsoProviderCreateSchema, SsoProviderSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/sso/providers",
  operationId: "createSsoProvider",
  tags: ["sso"],
  summary: "Add an OpenID Connect identity provider (owners)",
  description:
    "Register `redirectUri` of the answer (TERN_PUBLIC_URL + /api/sso/callback) at the provider. The client secret is stored encrypted and never returned. New users whose verified e-mail is in `allowedDomains` join with `defaultRole` (viewer or manager); `membershipScope: account` (account owners only) lets them join the whole account. The issuer must be https:// unless the server sets TERN_SSO_ALLOW_HTTP_ISSUER.",
  auth: { resource: "members" },
  errors: ["CONFLICT"],
  request: { body: jsonBody(SsoProviderCreateSchema) },
  responses: { 201: jsonResponse(SsoProviderSchema, "The new identity provider") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createSsoProvider(requestCtx(c), c.req.valid("json")), 201));
}
