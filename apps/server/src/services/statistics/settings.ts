/**
 * Statistics history settings (config.ts TERN_STATS_*) and the storage tiers
 * they give: each tier's bucket, how long it is kept and how its partitions
 * are cut. A partition is dropped whole once its end is older than the
 * tier's retention, so data lives between the retention and the retention
 * plus one partition.
 */
import type { ServerConfig } from "../../config.ts";

export type TierName = "raw" | "1m" | "1h";

export interface StatisticsSettings {
  rawRetentionMs: number;
  minuteRetentionMs: number;
  hourRetentionMs: number;
  /** Tunnel samples (`tunnel_samples`, the tunnels' raw tier) are kept this long (TERN_SAMPLE_RETENTION_DAYS). */
  tunnelRawRetentionMs: number;
  rawIntervalMs: number;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export function statisticsSettings(config: ServerConfig): StatisticsSettings {
  return {
    rawRetentionMs: config.TERN_STATS_RAW_RETENTION_HOURS * HOUR_MS,
    minuteRetentionMs: config.TERN_STATS_MINUTE_RETENTION_DAYS * DAY_MS,
    hourRetentionMs: config.TERN_STATS_HOUR_RETENTION_DAYS * DAY_MS,
    tunnelRawRetentionMs: config.TERN_SAMPLE_RETENTION_DAYS * DAY_MS,
    rawIntervalMs: config.TERN_STATS_RAW_INTERVAL_MS,
  };
}

/** Bucket of each tier in seconds (raw: none). */
export const TIER_BUCKET_S: Record<TierName, number> = { raw: 0, "1m": 60, "1h": 3600 };

export interface PartitionedTable {
  table: string;
  /** Width of one partition. */
  partitionMs: number;
  retentionMs(s: StatisticsSettings): number;
}

/**
 * Every partitioned table. Raw statistics: hourly partitions (a day's
 * retention drops one an hour); minute roll-ups and tunnel samples: daily;
 * hour roll-ups and state changes: weekly.
 */
export const PARTITIONED_TABLES: PartitionedTable[] = [
  { table: "stat_if_raw", partitionMs: HOUR_MS, retentionMs: (s) => s.rawRetentionMs },
  { table: "stat_health_raw", partitionMs: HOUR_MS, retentionMs: (s) => s.rawRetentionMs },
  { table: "stat_if_1m", partitionMs: DAY_MS, retentionMs: (s) => s.minuteRetentionMs },
  { table: "stat_health_1m", partitionMs: DAY_MS, retentionMs: (s) => s.minuteRetentionMs },
  { table: "stat_tunnel_1m", partitionMs: DAY_MS, retentionMs: (s) => s.minuteRetentionMs },
  { table: "stat_if_1h", partitionMs: 7 * DAY_MS, retentionMs: (s) => s.hourRetentionMs },
  { table: "stat_health_1h", partitionMs: 7 * DAY_MS, retentionMs: (s) => s.hourRetentionMs },
  { table: "stat_tunnel_1h", partitionMs: 7 * DAY_MS, retentionMs: (s) => s.hourRetentionMs },
  { table: "stat_state_changes", partitionMs: 7 * DAY_MS, retentionMs: (s) => s.hourRetentionMs },
  { table: "tunnel_samples", partitionMs: DAY_MS, retentionMs: (s) => s.tunnelRawRetentionMs },
];

/** Partitions are made this far ahead of now (at least two of each table), so a stopped duty does not stop writes at once. */
export const AHEAD_MS = 2 * DAY_MS;
