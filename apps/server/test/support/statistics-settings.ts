/** Statistics settings for tests: the shipped retention defaults, samples every 10 s. */
import { DAY_MS, HOUR_MS, type StatisticsSettings } from "../../src/services/statistics/settings.ts";

export const TEST_STATISTICS_SETTINGS: StatisticsSettings = {
  rawRetentionMs: 24 * HOUR_MS,
  minuteRetentionMs: 7 * DAY_MS,
  hourRetentionMs: 90 * DAY_MS,
  tunnelRawRetentionMs: 7 * DAY_MS,
  rawIntervalMs: 10_000,
};
