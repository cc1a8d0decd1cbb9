import { jobsLocationHeader, locationOfJobs } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updatePeer } from "../../services/peers.ts";
import { PeerUpdatedSchema, PeerUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/peers/{id}",
  operationId: "updatePeer",
  tags: ["peers"],
  summary: "Replace a peer connection (omit psk to keep the current one)",
  description:
    "The body is the whole peer: omitted fields take their defaults, except psk, which is kept when omitted. Devices with a tunnel to the peer are recompiled: 202 with their `peers` jobs (Location lists them), or 200 when no device configuration changed.",
  auth: { resource: "peers" },
  errors: ["CONFLICT"],
  request: { params: IdParams, body: jsonBody(PeerUpdateSchema) },
  responses: {
    200: jsonResponse(PeerUpdatedSchema, "Updated; no device configuration changed"),
    202: { ...jsonResponse(PeerUpdatedSchema, "Updated; device jobs were queued"), headers: jobsLocationHeader },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { peer, jobIds } = await updatePeer(requestCtx(c), c.req.valid("param").id, c.req.valid("json"));
    const body = { ...peer, jobIds };
    return jobIds.length ? c.json(body, 202, locationOfJobs(c, jobIds)) : c.json(body, 200);
  });
}
