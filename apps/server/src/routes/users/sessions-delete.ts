import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { revokeOwnSession } from "../../services/accounts/user-sessions.ts";

export const route = defineRoute({
  method: "delete",
  path: "/users/sessions/{id}",
  operationId: "revokeOwnSession",
  tags: ["users"],
  summary: "Revoke one of your own sessions: its refresh token and access JWTs stop working at once",
  auth: "user",
  request: { params: IdParams },
  responses: { 204: { description: "Revoked" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await revokeOwnSession(c.get("deps").db, c.get("user"), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
