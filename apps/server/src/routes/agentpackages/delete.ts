import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deleteAgentPackage } from "../../services/agent-upgrades/packages.ts";
import { ACCOUNT_AUTH } from "./schemas.ts";

export const route = defineRoute({
  method: "delete",
  path: "/agent-packages/{id}",
  operationId: "deleteAgentPackage",
  tags: ["agent-upgrades"],
  summary: "Delete an agent package (account owners); 409 ROLLOUT_CONFLICT while a running or paused rollout uses it",
  auth: ACCOUNT_AUTH,
  errors: ["ROLLOUT_CONFLICT"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted, with the finished rollouts of the package" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deleteAgentPackage(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
