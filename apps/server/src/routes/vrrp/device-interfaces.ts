import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listDeviceVrrpInterfaces } from "../../services/vrrp-status.ts";
import { DeviceVrrpInterfacesSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/vrrp/deviceVrrpInterfaces",
  operationId: "listDeviceVrrpInterfaces",
  tags: ["vrrp"],
  summary: "Per device, the LAN interfaces that can carry a VRRP group",
  description:
    "Assigned LAN interfaces with a static address and prefix; devices without one are not listed. Filter and sort keys: device (id), name, hostname, isApproved, createdAt. Default sort: name.",
  auth: { resource: "vrrp" },
  request: { query: ListQuerySchema },
  responses: {
    200: {
      ...jsonResponse(z.array(DeviceVrrpInterfacesSchema), "Devices and their VRRP-capable interfaces"),
      headers: recordsTotalHeader,
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listDeviceVrrpInterfaces(requestCtx(c), foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
