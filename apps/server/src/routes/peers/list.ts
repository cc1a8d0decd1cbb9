import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listPeers, PEER_LIST_KEYS } from "../../services/peers.ts";
import { PeerSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/peers",
  operationId: "listPeers",
  tags: ["peers"],
  summary: "Peer connections (IKEv2 gateways Tern does not manage); the PSK is never returned",
  description: `Filter and sort keys: ${PEER_LIST_KEYS}. \`tunnels\` is the number of tunnels using the peer.`,
  auth: { resource: "peers" },
  request: { query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(PeerSchema), "Peers"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listPeers(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
