import { z } from "@hono/zod-openapi";
import { Id } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { revokeMemberSession } from "../../services/accounts/user-sessions.ts";

const Params = z.object({
  id: Id.meta({ param: { name: "id", in: "path" }, description: "Membership id" }),
  sessionId: Id.meta({ param: { name: "sessionId", in: "path" }, description: "Session id" }),
});

export const route = defineRoute({
  method: "delete",
  path: "/members/{id}/sessions/{sessionId}",
  operationId: "revokeMemberSession",
  tags: ["members"],
  summary: "Revoke a login session of a member: its refresh token and access JWTs stop working at once",
  auth: { resource: "members" },
  request: { params: Params },
  responses: { 204: { description: "Revoked" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { id, sessionId } = c.req.valid("param");
    await revokeMemberSession(requestCtx(c), id, sessionId);
    return c.body(null, 204);
  });
}
