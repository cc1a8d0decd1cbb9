/**
 * The ends of device links, recorded together when many close at once (a
 * data-centre link that drops, a load balancer that restarts, this server
 * shutting down): one transaction for what queues while the previous one
 * runs (a group commit), a fixed six statements whatever its size, instead
 * of five per device. For each link, with the device rows locked in id order
 * (as every writer of several device rows locks them): the config jobs its
 * applies left running go back to the queue, and its session ends, when it is
 * still this link's; a device whose session ended is marked disconnected. A
 * lone close goes at once, as before batching.
 */
import { sql } from "kysely";
import { GroupCommit } from "../db/group-commit.ts";
import type { Db } from "../db/schema.ts";
import { requeueRunningApplies } from "../jobs/job-store.ts";
import { anyUuid, lockDevices } from "../services/desired-config.ts";
import type { DeviceConnection } from "./connection.ts";

export interface LinkEnd {
  conn: DeviceConnection;
  /** Applies of this link whose running jobs go back to the queue (the one in flight, one the hello started). */
  applyIds: readonly string[];
}

/** Link ends per transaction at most. */
const MAX_BATCH = 500;

/** Records link ends; `submit` answers whether the link's session was still its own (the device is now disconnected). */
export function linkEndBatcher(db: Db): { submit(end: LinkEnd): Promise<boolean> } {
  const commit = new GroupCommit<LinkEnd, boolean>(
    (ends) => db.transaction().execute((trx) => recordLinkEnds(trx, ends)),
    MAX_BATCH,
  );
  return { submit: (end) => commit.submit(end) };
}

/** One transaction's work for `ends` (in a transaction); one answer per end, in order. */
export async function recordLinkEnds(trx: Db, ends: readonly LinkEnd[]): Promise<boolean[]> {
  const deviceIds = [...new Set(ends.map((e) => e.conn.deviceId))];
  await lockDevices(trx, deviceIds).select("id").execute();
  await requeueRunningApplies(
    trx,
    ends.flatMap((e) => e.applyIds.map((applyId) => ({ deviceId: e.conn.deviceId, applyId }))),
  );
  const gone = await sql<{ device_id: string; session_id: string }>`delete from device_sessions s
      using unnest(${ends.map((e) => e.conn.deviceId)}::uuid[], ${ends.map((e) => e.conn.sessionId)}::uuid[])
        as u(device_id, session_id)
      where s.device_id = u.device_id and s.session_id = u.session_id
      returning s.device_id, s.session_id`.execute(trx);
  const ended = new Set(gone.rows.map((r) => `${r.device_id}/${r.session_id}`));
  const disconnected = [...new Set(gone.rows.map((r) => r.device_id))];
  if (disconnected.length > 0)
    await trx
      .updateTable("devices")
      .set({ connection: "disconnected", last_seen_at: sql`now()`, disconnected_at: sql`now()` })
      .where("id", "=", anyUuid(disconnected))
      .execute();
  return ends.map((e) => ended.has(`${e.conn.deviceId}/${e.conn.sessionId}`));
}
