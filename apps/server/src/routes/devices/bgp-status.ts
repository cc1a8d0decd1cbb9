import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getBgpStatus } from "../../services/devices/status.ts";
import { BgpStatusResponseSchema, StatusQuery } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/bgp/status",
  operationId: "getBgpStatus",
  tags: ["devices"],
  summary: "BGP state of a device (neighbors, their sessions and prefixes) as the device reported it",
  description:
    '`source`: `reported` (last status message, with `reportedAt`), `live` (with `live=true`: asked over the device\'s link just now), or `unknown` with `state: "unknown"` when the device never reported.',
  auth: { resource: "devices" },
  errors: ["DEVICE_NOT_CONNECTED", "DEVICE_TIMEOUT"],
  request: { params: IdParams, query: StatusQuery },
  responses: { 200: jsonResponse(BgpStatusResponseSchema, "The device's BGP state") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { live } = c.req.valid("query");
    const status = await getBgpStatus(requestCtx(c), { deviceId: c.req.valid("param").id, live }, c.get("deps").deviceStatus);
    return c.json(status, 200);
  });
}
