import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteSigningKey } from "../../services/agent-upgrades/keys.ts";
import { ACCOUNT_AUTH } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/agent-signing-keys/{id}",
  operationId: "deleteAgentSigningKey",
  tags: ["agent-upgrades"],
  summary: "Remove a signing key (account owners); 409 CONFLICT while packages it signed are kept",
  auth: ACCOUNT_AUTH,
  errors: ["CONFLICT"],
  request: { params: IdParams },
  responses: { 204: { description: "Removed" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteSigningKey(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
