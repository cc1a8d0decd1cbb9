import { z } from "@hono/zod-openapi";
import { PEER_PRESETS, PeerPresetInfo } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/peers/presets",
  operationId: "listPeerPresets",
  tags: ["peers"],
  summary: "Peer-connection presets for cloud IPsec gateways (AWS, Azure, Google Cloud, Cloudflare)",
  description:
    "Each preset fills a peer's IKE version, IKE/ESP algorithms, lifetimes, PFS and DPD as the vendor documents the customer side; `source` is the page it follows and `note` says what was chosen and what could not be verified. Use the id as `preset` on POST/PUT /peers.",
  auth: { resource: "peers" },
  responses: { 200: jsonResponse(z.array(PeerPresetInfo.meta({ id: "PeerPreset" })), "The presets") },
});

export function register(app: ApiApp) {
  app.openapi(route, (c) =>
    c.json(
      PEER_PRESETS.map((p) => PeerPresetInfo.parse(p)),
      200,
    ),
  );
}
