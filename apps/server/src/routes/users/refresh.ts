import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { refresh } from "../../services/sessions.ts";
import { RefreshRequestSchema, TokenPairSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/refresh",
  operationId: "refreshToken",
  tags: ["users"],
  summary: "Exchange a refresh token for a new pair (the old refresh token stops working)",
  auth: "public",
  errors: ["UNAUTHENTICATED"],
  request: { body: jsonBody(RefreshRequestSchema) },
  responses: { 200: jsonResponse(TokenPairSchema, "A new token pair") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await refresh(c.get("deps"), c.req.valid("json").refreshToken), 200));
}
