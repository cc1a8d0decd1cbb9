import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { foldListQuery, ListQuerySchema, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { DEVICE_TUNNEL_LIST, listDeviceTunnels } from "../../services/device-tunnels.ts";
import { DeviceTunnelSchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/tunnels",
  operationId: "listDeviceTunnels",
  tags: ["devices"],
  summary: "The tunnels a device is an end of",
  description: `Filter and sort keys: ${Object.keys(DEVICE_TUNNEL_LIST.fields).join(", ")} (\`device.name\` matches either end). Default sort: num ascending. Until the devices report tunnel state, a tunnel with an end that is not connected is status N/A, pending, with the reason.`,
  auth: { resource: "devices" },
  request: { params: IdParams, query: ListQuerySchema },
  responses: { 200: { ...jsonResponse(z.array(DeviceTunnelSchema), "Tunnels of the device"), headers: recordsTotalHeader } },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const { items, total } = await listDeviceTunnels(requestCtx(c), c.req.valid("param").id, foldListQuery(c.req.valid("query")));
    withRecordsTotal(c, total);
    return c.json(items, 200);
  });
}
