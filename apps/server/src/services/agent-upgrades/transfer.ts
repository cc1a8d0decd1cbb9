/**
 * Sends one device its package over its websocket (whichever instance holds it): `upgrade-begin` with the
 * version, size, checksum and signature, `upgrade-chunk`s of UPGRADE_CHUNK_BYTES, then `upgrade-install`. The
 * device then restarts into the new version; its report (reports.ts) or the deadline ends the upgrade. Any
 * refusal (no trusted key, bad signature, unknown method of an older agent, not connected) fails the device
 * with the reason, and its job (`transfer`: upgrade-jobs.ts).
 */
import { UPGRADE_CHUNK_BYTES } from "@tern/protocol";
import { sql } from "kysely";
import type { Logger } from "pino";
import type { Db } from "../../db/schema.ts";
import type { DeviceLink } from "../../gateway/device-link.ts";
import { ApiError } from "../../http/errors.ts";
import { emptySettled, reportFinishedJobs } from "../../jobs/finished-jobs.ts";
import type { ServerMetrics } from "../../metrics/server-metrics.ts";
import type { StartedUpgrade } from "./rollout-duty.ts";
import { endUpgradeJob, upgradeError } from "./upgrade-jobs.ts";

export interface TransferDeps {
  db: Db;
  deviceLink: DeviceLink;
  logger: Logger;
  /** The job metrics a failed transfer's job is observed in (its `jobs-finished` goes on the link's events). */
  metrics: ServerMetrics;
}

/** Per request: a chunk of 512 KiB over a slow WAN. */
const REQUEST_TIMEOUT_MS = 60_000;
/** After `upgrade-install` answered: the device has this much beyond its health time to report (restart, reconnect). */
const REPORT_MARGIN_SEC = 60;

export async function transferPackage(deps: TransferDeps, up: StartedUpgrade): Promise<void> {
  const { db, deviceLink, logger } = deps;
  const fail = async (detail: string) => {
    logger.warn({ deviceId: up.deviceId, rollout: up.rolloutId, detail }, "agent upgrade failed");
    const settled = await db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable("agent_rollout_devices")
        .set({ state: "failed", detail: detail.slice(0, 1000), finished_at: sql`now()` })
        .where("id", "=", up.id)
        .where("state", "=", "sending")
        .returning("job_id")
        .executeTakeFirst();
      return row ? endUpgradeJob(trx, row.job_id, { state: "failed", error: upgradeError("transfer", detail) }) : emptySettled();
    });
    reportFinishedJobs(deps, deviceLink.events, settled);
  };
  try {
    const pkg = await db
      .selectFrom("agent_packages")
      .select(["version", "sha256", "signature", "content"])
      .where("id", "=", up.packageId)
      .executeTakeFirst();
    if (!pkg) return await fail("the package was deleted");
    const content = Buffer.from(pkg.content);
    const begin = await deviceLink.requestFromDevice(
      up.deviceId,
      "upgrade-begin",
      { upgradeId: up.id, version: pkg.version, size: content.length, sha256: pkg.sha256, signature: pkg.signature },
      REQUEST_TIMEOUT_MS,
    );
    if (!begin.ok) return await fail(`the device refused the package: ${begin.error}`);
    for (let offset = 0; offset < content.length; offset += UPGRADE_CHUNK_BYTES) {
      const data = content.subarray(offset, offset + UPGRADE_CHUNK_BYTES).toString("base64");
      const chunk = await deviceLink.requestFromDevice(
        up.deviceId,
        "upgrade-chunk",
        { upgradeId: up.id, offset, data },
        REQUEST_TIMEOUT_MS,
      );
      if (!chunk.ok) return await fail(`the device refused a chunk: ${chunk.error}`);
    }
    const install = await deviceLink.requestFromDevice(
      up.deviceId,
      "upgrade-install",
      { upgradeId: up.id, healthTimeoutSec: up.healthTimeoutSec },
      REQUEST_TIMEOUT_MS,
    );
    if (!install.ok) return await fail(`the device did not install the package: ${install.error}`);
    await db
      .updateTable("agent_rollout_devices")
      .set({ state: "installing", deadline_at: new Date(Date.now() + (up.healthTimeoutSec + REPORT_MARGIN_SEC) * 1000) })
      .where("id", "=", up.id)
      .where("state", "=", "sending")
      .execute();
  } catch (err) {
    await fail(err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)).catch((e: unknown) =>
      logger.error({ err: e }, "could not record a failed agent upgrade"),
    );
  }
}
