import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getDevice } from "../../services/devices/devices.ts";
import { DeviceSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}",
  operationId: "getDevice",
  tags: ["devices"],
  summary: "One device: interfaces, static routes, DHCP, BGP, firewall with LAN NAT rules",
  auth: { resource: "devices" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(DeviceSchema, "The device") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getDevice(requestCtx(c), c.req.valid("param").id), 200));
}
