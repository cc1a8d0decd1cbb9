import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { getTopTalkers } from "../../services/statistics/org-aggregates.ts";
import { STATISTICS_ERRORS, TopTalkersQuery, TopTalkersSchema } from "../statistics/params.ts";

export const route = defineRoute({
  method: "get",
  path: "/organizations/{id}/statistics/top-talkers",
  operationId: "getOrganizationTopTalkers",
  tags: ["organizations", "statistics"],
  summary: "The organization's devices (or interfaces) that moved the most bytes over a time range",
  description:
    "Default range: the last 24 hours. Ranges of 6 hours or more are read from the 1-hour roll-ups and end with the last rolled-up hour (`to` in the answer), shorter ones from the 1-minute roll-ups and the last minute's raw rows; `from` is rounded down to that bucket. Needs the `devices` read permission.",
  auth: { resource: "devices", orgParam: "id" },
  errors: [...STATISTICS_ERRORS],
  request: { params: IdParams, query: TopTalkersQuery },
  responses: { 200: jsonResponse(TopTalkersSchema, "The top talkers") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) => c.json(await getTopTalkers(requestCtx(c), c.req.valid("query")), 200));
}
