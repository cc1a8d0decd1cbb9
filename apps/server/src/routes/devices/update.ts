import { acceptedWithJobs, jobsQueuedResponse } from "../../http/accepted.ts";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonBody, jsonResponse } from "../../http/schemas.ts";
import { updateDevice } from "../../services/devices/update.ts";
import { DeviceSchema, DeviceUpdateQuerySchema, DeviceUpdateSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "put",
  path: "/devices/{id}",
  operationId: "updateDevice",
  tags: ["devices"],
  summary: "Change a device's configuration, or approve it",
  description: [
    "Fields given replace the stored ones; fields left out stay. `interfaces` entries name an interface by `devId` (interfaces come from the device: an unknown devId is refused) and change only the fields they contain; read-only fields (`id`, `PublicIP`, `PublicPort`, `isPublicAddressRateLimited` and the other fields only GET answers) are ignored; a field neither GET nor this schema knows is refused (400 VALIDATION_FAILED `unknown field …`). `staticRoutes`, `dhcp`, `bgp` and `firewall` are replaced whole. A whole device from GET can be sent back.",
    "`isApproved: true` approves a registered device (its first job carries the whole configuration). A device without an identity key (reset with POST /api/devices/{id}/identity/reset, not registered again since) cannot be approved: 409 CONFLICT.",
    "Validated as a whole (VALIDATION_FAILED naming each problem's path): addresses inside their interface subnets and off the tunnel range, DHCP ranges inside the LAN and `defaultLeaseTime` ≤ `maxLeaseTime`, routes unique, BGP `multiHop` on every neighbor when enabled, LAN NAT prefixes of equal length, interfaces carrying tunnels stay assigned WAN, VRRP groups of the device stay valid. The pre-5.1.1 `deviceSpecifficRulesEnabled` is refused naming `deviceSpecificRulesEnabled`.",
    "A LAN subnet overlapping another device's LAN in the organization is 400 LAN_OVERLAPPING naming that device, unless `allowOverlapping=true`.",
    "**202** with `{jobIds}` and `Location: /api/jobs?ids=…` when the change queued jobs (a `modify` job for an approved device whose configuration changed, and for the devices whose configuration reads it: the far ends of its tunnels, its VRRP peers). **200** with the device when nothing a device runs changed (e.g. the description, or a device not yet approved). Nothing is stored on any error.",
  ].join("\n\n"),
  auth: { resource: "devices" },
  errors: ["LAN_OVERLAPPING", "CONFLICT", "ACCOUNT_LIMIT"],
  // A whole device from GET can be sent back: its read-only fields are ignored, unknown ones refused.
  readOnlyFieldsOf: DeviceSchema,
  request: { params: IdParams, query: DeviceUpdateQuerySchema, body: jsonBody(DeviceUpdateSchema) },
  responses: { 200: jsonResponse(DeviceSchema, "Stored; no device work needed"), 202: jobsQueuedResponse },
});

/** The keys each interface entry had in the request, before defaults were filled in. */
function interfaceKeys(raw: unknown): string[][] | undefined {
  const list = (raw as { interfaces?: unknown } | null)?.interfaces;
  if (!Array.isArray(list)) return undefined;
  return list.map((entry) => (entry && typeof entry === "object" ? Object.keys(entry) : []));
}

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { device, jobIds } = await updateDevice(requestCtx(c), {
      id: c.req.valid("param").id,
      body: c.req.valid("json"),
      // The validator already parsed the body; Hono hands out the cached JSON.
      interfaceKeys: interfaceKeys(await c.req.json()),
      allowOverlapping: c.req.valid("query").allowOverlapping,
    });
    return jobIds.length ? acceptedWithJobs(c, jobIds) : c.json(device, 200);
  });
}
