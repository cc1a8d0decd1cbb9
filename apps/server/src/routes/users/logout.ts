import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody } from "../../http/schemas.ts";
import { logout } from "../../services/sessions.ts";
import { RefreshRequestSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/users/logout",
  operationId: "logout",
  tags: ["users"],
  summary: "Revoke a login session: its refresh token and access JWTs stop working",
  auth: "public",
  request: { body: jsonBody(RefreshRequestSchema) },
  responses: { 204: { description: "Logged out (also when the token was already revoked)" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await logout(c.get("deps"), c.req.valid("json").refreshToken);
    return c.body(null, 204);
  });
}
