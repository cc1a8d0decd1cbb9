import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getDeviceStatistics } from "../../services/statistics/device-history.ts";
import { DeviceStatisticsQuery, DeviceStatisticsSchema, STATISTICS_ERRORS } from "../statistics/params.ts";

export const route = defineRoute({
  method: "get",
  path: "/devices/{id}/statistics",
  operationId: "getDeviceStatistics",
  tags: ["devices", "statistics"],
  summary: "A device's interface rates and counters, health, and BGP/VRRP state changes over a time range",
  description:
    "Default range: the last hour. `step` picks the storage tier (`tier`) and every series is re-bucketed to it: interface rates are the bits (packets) counted in a step over the seconds the device reported in it, health the means (and CPU maximum) of its statuses. `stateChanges` lists BGP session and VRRP state changes in the range (at most 1000, oldest first). A range older than TERN_STATS_HOUR_RETENTION_DAYS, reversed or in the future is 400 STATISTICS_RANGE_INVALID; a step its tier cannot serve is 400 STATISTICS_STEP_INVALID.",
  auth: { resource: "devices" },
  errors: [...STATISTICS_ERRORS],
  request: { params: IdParams, query: DeviceStatisticsQuery },
  responses: { 200: jsonResponse(DeviceStatisticsSchema, "The device's statistics") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) =>
    c.json(await getDeviceStatistics(requestCtx(c), c.req.valid("param").id, c.req.valid("query")), 200),
  );
}
