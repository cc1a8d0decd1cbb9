/**
 * The agents' upgrade reports (`status.upgrade`): `committed` (the new version came back healthy) makes the
 * device `upgraded` and its job complete, `rolled-back` makes it `rolled-back` and its job failed (`device`, with
 * the agent's detail). An agent repeats its report in every status until its next upgrade, so each instance
 * remembers which reports it recorded; the update's state condition makes a repeat from another instance a
 * no-op too. A device marked failed by its deadline that reports later still gets the truth recorded, on its
 * row and its job (upgrade-jobs.ts).
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import type { GatewayEvents } from "../../gateway/events.ts";
import { emptySettled, reportFinishedJobs } from "../../jobs/finished-jobs.ts";
import type { ServerMetrics } from "../../metrics/server-metrics.ts";
import { endUpgradeJob, upgradeError } from "./upgrade-jobs.ts";

const REMEMBERED = 10_000;

export function recordUpgradeReports(
  deps: { db: Db; logger: Logger; metrics: ServerMetrics },
  events: GatewayEvents,
): () => void {
  const { db, logger } = deps;
  const seen = new Set<string>();
  return events.on("status", ({ deviceId, status }) => {
    const report = status.upgrade;
    if (!report) return;
    const key = `${report.upgradeId}:${report.outcome}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (seen.size > REMEMBERED) seen.delete(seen.values().next().value as string);
    const committed = report.outcome === "committed";
    const detail = report.detail?.slice(0, 1000) ?? (committed ? null : "rolled back by the device");
    void db
      .transaction()
      .execute(async (trx) => {
        const row = await trx
          .updateTable("agent_rollout_devices")
          .set({
            state: committed ? "upgraded" : "rolled-back",
            detail,
            // The database's time, not the agent's: the scheduler compares it with the rollout's own timestamps.
            finished_at: sql`now()`,
          })
          .where("id", "=", report.upgradeId)
          .where("device_id", "=", deviceId)
          .where("state", "in", ["sending", "installing", "failed"])
          .returning("job_id")
          .executeTakeFirst();
        if (!row) return emptySettled();
        return endUpgradeJob(
          trx,
          row.job_id,
          committed ? { state: "complete" } : { state: "failed", error: upgradeError("device", detail ?? "rolled back") },
        );
      })
      .then((settled) => reportFinishedJobs(deps, events, settled))
      .catch((err: unknown) => {
        seen.delete(key);
        logger.warn({ err, deviceId }, "could not record an agent upgrade report");
      });
  });
}
