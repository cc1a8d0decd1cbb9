import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listSsoProviders } from "../../services/sso/index.ts";
import { SsoProviderSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/sso/providers",
  operationId: "listSsoProviders",
  tags: ["sso"],
  summary: "The organization's OpenID Connect identity providers (never their client secrets)",
  auth: { resource: "members" },
  responses: { 200: jsonResponse(z.array(SsoProviderSchema), "Identity providers") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listSsoProviders(requestCtx(c)), 200));
}
