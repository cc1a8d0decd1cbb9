import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { resetDeviceIdentity } from "../../services/devices/identity/reset.ts";
import { DeviceSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "post",
  path: "/devices/{id}/identity/reset",
  operationId: "resetDeviceIdentity",
  tags: ["devices"],
  summary: "Forget a device's identity key (a router whose disk was replaced): it goes back to pending",
  description: [
    "The device's public key and device token are forgotten and the device is no longer approved; its websocket is closed at once, on whichever server instance holds it. Its configuration, interfaces and tunnels are kept.",
    "The router then registers again (`tern-agent register`) with a new key: the first registration of the device's machine id takes the device over, pending, and an admin approves it again (PUT /api/devices/{id} `isApproved: true`). Until then it cannot be approved (409 CONFLICT).",
    "Audited as `identity-reset`. Needs the `put` permission on devices.",
  ].join("\n\n"),
  auth: { resource: "devices", permission: "put" },
  request: { params: IdParams },
  responses: { 200: jsonResponse(DeviceSchema, "The device, pending, without a key") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await resetDeviceIdentity(requestCtx(c), c.req.valid("param").id), 200));
}
