import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams } from "../../http/schemas.ts";
import { deletePeer } from "../../services/peers.ts";

export const route = defineRoute({
  method: "delete",
  path: "/peers/{id}",
  operationId: "deletePeer",
  tags: ["peers"],
  summary: "Delete a peer connection that no tunnel uses",
  description: "A peer with tunnels is refused with CONFLICT naming them (details[].path = tunnels): delete those tunnels first.",
  auth: { resource: "peers" },
  errors: ["CONFLICT"],
  request: { params: IdParams },
  responses: { 204: { description: "Deleted" } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    await deletePeer(requestCtx(c), c.req.valid("param").id);
    return c.body(null, 204);
  });
}
