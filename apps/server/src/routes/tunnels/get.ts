import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getTunnel } from "../../services/tunnels/query.ts";
import { TunnelSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/tunnels/{id}",
  operationId: "getTunnel",
  tags: ["tunnels"],
  summary: "One tunnel with its status, loopbacks and notification thresholds",
  auth: { resource: "tunnels" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(TunnelSchema, "The tunnel") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getTunnel(requestCtx(c), c.req.valid("param").id), 200));
}
