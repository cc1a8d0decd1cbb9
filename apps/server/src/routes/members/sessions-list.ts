import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { listMemberSessions } from "../../services/accounts/user-sessions.ts";
import { SessionSchema } from "../users/schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/members/{id}/sessions",
  operationId: "listMemberSessions",
  tags: ["members"],
  summary: "The active login sessions of a member (by membership id)",
  description:
    "For those who may remove the member: the `del` bit on members (owners), and an account owner for an account-wide member.",
  auth: { resource: "members", permission: "del" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(z.array(SessionSchema), "Active sessions") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await listMemberSessions(requestCtx(c), c.req.valid("param").id), 200));
}
