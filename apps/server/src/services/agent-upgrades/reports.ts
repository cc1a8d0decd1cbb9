/**
 * The agents' upgrade reports (`status.upgrade`): `committed` (the new version came back healthy) makes the
 * device `upgraded`, `rolled-back` makes it `rolled-back`. An agent repeats its report in every status until its
 * next upgrade, so each instance remembers which reports it recorded; the update's state condition makes a
 * repeat from another instance a no-op too. A device marked failed by its deadline that reports later still
 * gets the truth recorded.
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import type { GatewayEvents } from "../../gateway/events.ts";

const REMEMBERED = 10_000;

export function recordUpgradeReports(db: Db, events: GatewayEvents, logger: Logger): () => void {
  const seen = new Set<string>();
  return events.on("status", ({ deviceId, status }) => {
    const report = status.upgrade;
    if (!report) return;
    const key = `${report.upgradeId}:${report.outcome}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (seen.size > REMEMBERED) seen.delete(seen.values().next().value as string);
    void db
      .updateTable("agent_rollout_devices")
      .set({
        state: report.outcome === "committed" ? "upgraded" : "rolled-back",
        detail: report.detail?.slice(0, 1000) ?? (report.outcome === "committed" ? null : "rolled back by the device"),
        // The database's time, not the agent's: the scheduler compares it with the rollout's own timestamps.
        finished_at: sql`now()`,
      })
      .where("id", "=", report.upgradeId)
      .where("device_id", "=", deviceId)
      .where("state", "in", ["sending", "installing", "failed"])
      .execute()
      .catch((err: unknown) => {
        seen.delete(key);
        logger.warn({ err, deviceId }, "could not record an agent upgrade report");
      });
  });
}
