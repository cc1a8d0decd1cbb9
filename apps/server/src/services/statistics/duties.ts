/**
 * The periodic duties of statistics history, run once per interval across
 * all instances by the gateway's DutyRunner (advisory lock + claimed
 * interval, gateway/duties.ts): partitions made ahead and expired ones
 * dropped, a few per run; closed minutes and hours rolled up.
 */
import type { Logger } from "pino";
import type { Duty } from "../../gateway/duties.ts";
import { maintainPartitions } from "./partitions.ts";
import { rollUpHours, rollUpMinutes } from "./rollup.ts";
import type { StatisticsSettings } from "./settings.ts";

export const PARTITION_DUTY_MS = 10 * 60_000;
export const ROLLUP_DUTY_MS = 15_000;
/**
 * Partitions made or dropped per run (one short transaction: two take 15–30 ms on PGlite, whose one connection
 * requests wait for meanwhile; eight took 60–110 ms); with more to do, the duty runs again AGAIN_DELAY_MS later.
 */
export const PARTITIONS_PER_RUN = 2;

export function statisticsDuties(settings: StatisticsSettings, logger: Logger): Duty[] {
  return [
    {
      name: "statistics-partitions",
      intervalMs: PARTITION_DUTY_MS,
      async run(trx) {
        const { created, dropped, more } = await maintainPartitions(trx, settings, PARTITIONS_PER_RUN);
        if (created || dropped.length) logger.info({ created, dropped, more }, "statistics partitions maintained");
        return more ? "again" : undefined;
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
