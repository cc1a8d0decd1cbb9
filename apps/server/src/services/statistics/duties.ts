/**
 * The periodic duties of statistics history, run once per interval across
 * all instances by the gateway's DutyRunner (advisory lock + claimed
 * interval, gateway/duties.ts): partitions made ahead and expired ones
 * dropped; closed minutes and hours rolled up.
 */
import type { Logger } from "pino";
import type { Duty } from "../../gateway/duties.ts";
import { dropExpiredPartitions, ensurePartitions } from "./partitions.ts";
import { rollUpHours, rollUpMinutes } from "./rollup.ts";
import type { StatisticsSettings } from "./settings.ts";

export const PARTITION_DUTY_MS = 10 * 60_000;
export const ROLLUP_DUTY_MS = 15_000;

export function statisticsDuties(settings: StatisticsSettings, logger: Logger): Duty[] {
  return [
    {
      name: "statistics-partitions",
      intervalMs: PARTITION_DUTY_MS,
      async run(trx) {
        const created = await ensurePartitions(trx);
        const dropped = await dropExpiredPartitions(trx, settings);
        if (created || dropped.length) logger.info({ created, dropped }, "statistics partitions maintained");
      },
    },
    {
      name: "statistics-rollup",
      intervalMs: ROLLUP_DUTY_MS,
      async run(trx) {
        await rollUpMinutes(trx, new Date(), settings.rawRetentionMs);
        await rollUpHours(trx);
      },
    },
  ];
}
