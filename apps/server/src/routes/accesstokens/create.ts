import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createAccessToken } from "../../services/access-tokens.ts";
import { AccessTokenCreatedSchema, AccessTokenCreateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/accesstokens",
  operationId: "createAccessToken",
  tags: ["accesstokens"],
  summary: "Create an access token (API key) for the organization",
  description:
    "Resources not named in `permissions` get the role's masks (get=1 post=2 put=4 del=8). A key never gets a bit its creator lacks (403 FORBIDDEN naming each resource). The secret `token` is shown only in this answer.",
  auth: { resource: "accesstokens" },
  request: { body: jsonBody(AccessTokenCreateSchema) },
  responses: { 201: jsonResponse(AccessTokenCreatedSchema, "The new key, with its secret shown once") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createAccessToken(requestCtx(c), c.req.valid("json")), 201));
}
