import { z } from "@hono/zod-openapi";
import type { ApiApp } from "../../http/env.ts";
import { jsonText } from "../../http/json-text.ts";
import { foldListQuery, recordsPageHeaders, withRecordsTotal } from "../../http/list-query.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { jsonResponse } from "../../http/schemas.ts";
import { listTunnelsJson, TUNNEL_LIST_KEYS } from "../../services/tunnels/query.ts";
import { TunnelListQuery, TunnelSchema, TunnelSummarySchema } from "./schemas.ts";

export const route = defineRoute({
  method: "get",
  path: "/tunnels",
  operationId: "listTunnels",
  tags: ["tunnels"],
  summary: "Tunnels of the organization, with their status",
  description: `Filter and sort keys: ${TUNNEL_LIST_KEYS}. \`device.*\` matches either end (A or B). tunnelStatus is Connected | Not Connected | Pending, status additionally N/A while a device end is not connected; isPending with pendingReason says what the tunnel waits for.`,
  auth: { resource: "tunnels" },
  request: { query: TunnelListQuery },
  responses: {
    200: {
      ...jsonResponse(z.union([z.array(TunnelSchema), z.array(TunnelSummarySchema)]), "Tunnels (detailed or summary)"),
      headers: recordsPageHeaders,
    },
  },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    // Built as JSON by the database (services/tunnels/list-json.ts).
    const { json, total, next } = await listTunnelsJson(requestCtx(c), foldListQuery(query), query.response);
    withRecordsTotal(c, total, next);
    return jsonText(c, json);
  });
}
