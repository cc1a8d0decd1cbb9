/**
 * The delivery log in the database: every attempt the Deliverer makes (and
 * every delivery it had to drop) becomes a row of `notification_deliveries`,
 * and a delivery that finally failed counts in
 * `tern_notification_delivery_failures_total{channel}`.
 */
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../db/schema.ts";
import type { ServerMetrics } from "../metrics/server-metrics.ts";
import type { DeliveryAttempt, DeliveryLog } from "./delivery/index.ts";

export function databaseDeliveryLog(db: Db, metrics: ServerMetrics, logger: Logger): DeliveryLog {
  return {
    async record(attempt: DeliveryAttempt) {
      if (attempt.status === "failed") metrics.notificationDeliveryFailures.inc({ channel: attempt.channel });
      if (!attempt.orgId) {
        logger.debug({ deliveryId: attempt.deliveryId }, "delivery attempt without an organization: not logged");
        return;
      }
      await db
        .insertInto("notification_deliveries")
        .values({
          organization_id: attempt.orgId,
          // A notification deleted meanwhile: the attempt is still logged, without it.
          notification_id: attempt.notificationId
            ? sql<string | null>`(select id from notifications where id = ${attempt.notificationId}::uuid)`
            : null,
          delivery_id: attempt.deliveryId,
          channel: attempt.channel,
          target: attempt.target.slice(0, 2000),
          event: attempt.event,
          attempt: attempt.attempt,
          status: attempt.status,
          response_code: attempt.responseCode,
          error: attempt.error?.slice(0, 2000) ?? null,
          duration_ms: attempt.durationMs,
          at: attempt.at,
        })
        .execute();
    },
  };
}

/** Duty: removes log rows older than `retentionDays`, at most 10,000 per run. */
export async function deleteOldDeliveries(db: Db, retentionDays: number): Promise<number> {
  const result = await sql`delete from notification_deliveries where id in (
      select id from notification_deliveries where at < now() - ${`${retentionDays} days`}::interval limit 10000)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
