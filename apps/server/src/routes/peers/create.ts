import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonBody, jsonResponse } from "../../http/schemas.ts";
import { createPeer } from "../../services/peers.ts";
import { PeerCreateSchema, PeerSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/peers",
  operationId: "createPeer",
  tags: ["peers"],
  summary: "Create a peer connection",
  description:
    "IKE/ESP algorithms, DH groups, pfs, ikeLifeTime (phase 1) and sessionLifeTime (phase 2, shorter than ikeLifeTime), identities, traffic selectors and health-check targets. The PSK (8-255 characters) is encrypted at rest with the server key and never returned (pskSet). Names are unique in the organization (CONFLICT). Tunnels to the peer are created with POST /tunnels.",
  auth: { resource: "peers" },
  errors: ["CONFLICT"],
  request: { body: jsonBody(PeerCreateSchema) },
  responses: { 201: jsonResponse(PeerSchema, "The new peer") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await createPeer(requestCtx(c), c.req.valid("json")), 201));
}
