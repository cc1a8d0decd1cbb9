/** Query parameters the statistics routes share (devices, tunnels, organizations). */
import { z } from "@hono/zod-openapi";
import { DeviceStatistics, Timestamp, TopTalkers, WorstTunnels } from "@tern/protocol";
import { MAX_LIMIT } from "../../services/statistics/org-aggregates.ts";

export const StepParam = z.coerce
  .number()
  .int()
  .min(1)
  .max(7 * 86_400)
  .meta({
    description:
      "Seconds per point. It picks the storage tier: below 60 raw samples (kept TERN_STATS_RAW_RETENTION_HOURS), 60–3599 the 1-minute roll-ups (a multiple of 60, kept TERN_STATS_MINUTE_RETENTION_DAYS), 3600 and more the 1-hour roll-ups (a multiple of 3600, kept TERN_STATS_HOUR_RETENTION_DAYS). Default: the finest that gives at most 500 points.",
  });

export const FromParam = Timestamp.meta({ description: "Start of the range (ISO 8601); rounded down to the step" });
export const ToParam = Timestamp.meta({ description: "End of the range (ISO 8601); default: now" });

export const DeviceStatisticsQuery = z.strictObject({
  from: FromParam.optional(),
  to: ToParam.optional(),
  step: StepParam.optional(),
});

const Limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(MAX_LIMIT)
  .optional()
  .meta({ description: `How many to list (default 10, at most ${MAX_LIMIT})` });

export const TopTalkersQuery = z.strictObject({
  from: FromParam.optional().meta({ description: "Start of the range (ISO 8601); default: 24 hours before `to`" }),
  to: ToParam.optional(),
  by: z.enum(["device", "interface"]).optional().meta({ description: "Rank devices (default) or single interfaces" }),
  limit: Limit,
});

export const WorstTunnelsQuery = z.strictObject({
  from: FromParam.optional().meta({ description: "Start of the range (ISO 8601); default: 24 hours before `to`" }),
  to: ToParam.optional(),
  by: z.enum(["loss", "rtt", "jitter"]).optional().meta({ description: "Rank by mean loss (default), RTT or jitter" }),
  limit: Limit,
});

export const DeviceStatisticsSchema = DeviceStatistics.meta({ id: "DeviceStatistics" });
export const TopTalkersSchema = TopTalkers.meta({ id: "TopTalkers" });
export const WorstTunnelsSchema = WorstTunnels.meta({ id: "WorstTunnels" });

export const STATISTICS_ERRORS = ["STATISTICS_RANGE_INVALID", "STATISTICS_STEP_INVALID"] as const;
