import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getWorstTunnels } from "../../services/statistics/org-aggregates.ts";
import { STATISTICS_ERRORS, WorstTunnelsQuery, WorstTunnelsSchema } from "../statistics/params.ts";

export const route = defineRoute({
  method: "get",
  path: "/organizations/{id}/statistics/worst-tunnels",
  operationId: "getOrganizationWorstTunnels",
  tags: ["organizations", "statistics"],
  summary: "The organization's tunnels with the highest mean loss, RTT or jitter over a time range",
  description:
    "Default range: the last 24 hours; both ends' samples count. Tiers as for top talkers (1-hour roll-ups for 6 hours or more, else 1-minute). Needs the `tunnels` read permission.",
  auth: { resource: "tunnels", orgParam: "id" },
  errors: [...STATISTICS_ERRORS],
  request: { params: IdParams, query: WorstTunnelsQuery },
  responses: { 200: jsonResponse(WorstTunnelsSchema, "The worst tunnels") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getWorstTunnels(requestCtx(c), c.req.valid("query")), 200));
}
