import { z } from "@hono/zod-openapi";
import { Timestamp } from "@tern/protocol";
import type { ApiApp } from "../../http/env.ts";
import { requestCtx } from "../../http/request-ctx.ts";
import { defineRoute } from "../../http/route.ts";
import { IdParams, jsonResponse } from "../../http/schemas.ts";
import { DEFAULT_MAX_POINTS, getTunnelStats, MAX_RANGE_DAYS } from "../../services/tunnels/stats.ts";
import { StepParam } from "../statistics/params.ts";
import { TunnelStatsSchema } from "./schemas.ts";

const StatsQuery = z.object({
  from: Timestamp.optional().meta({ description: "Start of the range (ISO 8601); default: one hour before `to`" }),
  to: Timestamp.optional().meta({ description: "End of the range (ISO 8601); default: now" }),
  maxPoints: z.coerce
    .number()
    .int()
    .min(10)
    .max(10_000)
    .optional()
    .meta({
      description: `Points per tunnel end at most (default ${DEFAULT_MAX_POINTS}); more samples are averaged over time buckets`,
    }),
  step: StepParam.optional(),
});

export const route = defineRoute({
  method: "get",
  path: "/tunnels/{id}/stats",
  operationId: "getTunnelStats",
  tags: ["tunnels"],
  summary: "Loss, round-trip time, jitter and up/down samples of both tunnel ends over a time range",
  description: `Samples are taken from each end's status messages and kept for TERN_SAMPLE_RETENTION_DAYS. A range is at most ${MAX_RANGE_DAYS} days. When an end has more samples in the range than \`maxPoints\`, its samples are averaged over equal time buckets (\`bucketSeconds\`; \`up\` means up the whole bucket).\n\nWith \`step\` (seconds), each end's figures are means over steps read from the statistics tiers (\`tier\`: raw samples below 60 s, 1-minute roll-ups below 3600 s, 1-hour roll-ups from 3600 s, kept up to TERN_STATS_HOUR_RETENTION_DAYS), and \`maxPoints\` does not apply; a bad range or step is 400 STATISTICS_RANGE_INVALID / STATISTICS_STEP_INVALID.`,
  errors: ["STATISTICS_RANGE_INVALID", "STATISTICS_STEP_INVALID"],
  auth: { resource: "tunnels" },
  request: { params: IdParams, query: StatsQuery },
  responses: { 200: jsonResponse(TunnelStatsSchema, "The samples") },
});

export function register(app: ApiApp) {
  app.openapi(route, async (c) =>
    c.json(await getTunnelStats(requestCtx(c), c.req.valid("param").id, c.req.valid("query")), 200),
  );
}
