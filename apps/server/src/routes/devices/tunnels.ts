import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { jsonText } from "../../http/json-text.ts";
import { foldListQuery, recordsTotalHeader, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { listDeviceTunnels } from "../../services/devices/tunnels.ts";
import { TUNNEL_LIST_KEYS } from "../../services/tunnels/query.ts";
import { TunnelListQuery, TunnelSchema, TunnelSummarySchema } from "../tunnels/schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/tunnels",
  operationId: "listDeviceTunnels",
  tags: ["devices"],
  summary: "The tunnels a device is an end of, with their live status and quality",
  description: `The same read as GET /tunnels, scoped to the device. Filter and sort keys: ${TUNNEL_LIST_KEYS}. \`device.*\` matches either end. Default sort: num ascending.`,
  auth: { resource: "devices" },
  request: { params: IdParams, query: TunnelListQuery },
  responses: {
    200: {
      ...jsonResponse(z.union([z.array(TunnelSchema), z.array(TunnelSummarySchema)]), "Tunnels of the device"),
      headers: recordsTotalHeader,
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const { id } = c.req.valid("param");
    const { json, total } = await listDeviceTunnels(requestCtx(c), id, foldListQuery(query), query.response);
    withRecordsTotal(c, total);
    return jsonText(c, json);
  });
}
