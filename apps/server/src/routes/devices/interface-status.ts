import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { getInterfaceStatus } from "../../services/devices/status.ts";
import { InterfaceParams, InterfaceStatusResponseSchema, StatusQuery } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/interfaces/{interfaceId}/status",
  operationId: "getInterfaceStatus",
  tags: ["devices"],
  summary: "State of one interface as the device reported it",
  description:
    "`source` says where the state comes from: `reported` (the device's last status message, with `reportedAt`), `live` (with `live=true`: asked over the device's link just now), or `unknown` with `state: \"unknown\"` when the device never reported. The organization is chosen with `org` like every route. LTE status has no free `text` field (6.3.1): every value is typed.",
  auth: { resource: "devices" },
  errors: ["DEVICE_NOT_CONNECTED", "DEVICE_TIMEOUT"],
  request: { params: InterfaceParams, query: StatusQuery },
  responses: { 200: jsonResponse(InterfaceStatusResponseSchema, "The interface's state") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { id, interfaceId } = c.req.valid("param");
    const { live } = c.req.valid("query");
    const status = await getInterfaceStatus(requestCtx(c), { deviceId: id, interfaceId, live }, c.get("deps").deviceStatus);
    return c.json(status, 200);
  });
}
