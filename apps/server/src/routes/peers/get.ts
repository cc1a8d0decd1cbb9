import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getPeer } from "../../services/peers.ts";
import { PeerSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/peers/{id}",
  operationId: "getPeer",
  tags: ["peers"],
  summary: "One peer connection (pskSet instead of the PSK)",
  auth: { resource: "peers" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(PeerSchema, "The peer") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getPeer(requestCtx(c), c.req.valid("param").id), 200));
}
