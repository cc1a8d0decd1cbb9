/**
 * Which instance holds which device's link, in the database: instances with
 * heartbeats (gateway_instances) and one session row per connected device
 * (device_sessions). A newer link of the same device replaces the older
 * session row wherever the older one lives; a link that ends deletes its row
 * only when it is still its own, so a replaced link never marks the device
 * disconnected.
 */
import os from "node:os";
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import { requeueRunningMany } from "../jobs/job-store.ts";
import type { DeviceConnection } from "./connection.ts";

export async function registerInstance(db: Db, instanceId: string): Promise<void> {
  await db
    .insertInto("gateway_instances")
    .values({ id: instanceId, hostname: os.hostname(), pid: process.pid })
    .onConflict((oc) => oc.column("id").doUpdateSet({ heartbeat_at: sql`now()` }))
    .execute();
}

/** Refreshes the heartbeat; false when the row is gone (another instance judged this one dead). */
export async function heartbeat(db: Db, instanceId: string): Promise<boolean> {
  const result = await db
    .updateTable("gateway_instances")
    .set({ heartbeat_at: sql`now()` })
    .where("id", "=", instanceId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Takes a link back after another instance presumed this one dead and ended its session: the device is connected
 * here again, through this link's session. The columns its hello wrote (agent and protocol version, hostname) are
 * left as they are; the applied hash is the link's latest.
 */
export async function reclaimSession(db: Db, conn: DeviceConnection, instanceId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable("devices")
      .set({
        connection: "connected",
        disconnected_at: null,
        last_connected_at: sql`now()`,
        last_seen_at: sql`now()`,
        applied_hash: conn.appliedHash,
      })
      .where("id", "=", conn.deviceId)
      .execute();
    await trx
      .insertInto("device_sessions")
      .values({
        device_id: conn.deviceId,
        session_id: conn.sessionId,
        instance_id: instanceId,
        remote_address: conn.remoteAddress,
      })
      .onConflict((oc) =>
        oc.column("device_id").doUpdateSet({
          session_id: conn.sessionId,
          instance_id: instanceId,
          remote_address: conn.remoteAddress,
          connected_at: sql`now()`,
        }),
      )
      .execute();
  });
}

/**
 * Opens the sessions of a batch of hellos' links (one per device, rows locked by the caller), in one statement:
 * the devices' connection columns, their session rows, and a `tern_gateway` NOTIFY of each new session, which
 * the other instances hear at commit (a link of the same device they hold ends there).
 */
export async function openSessions(trx: Db, conns: readonly DeviceConnection[], instanceId: string): Promise<void> {
  if (conns.length === 0) return;
  const col = <T>(f: (c: DeviceConnection) => T) => conns.map(f);
  // The session rows' foreign key is checked at the statement's end, against the device rows it updated.
  await sql`with d as (update devices set connection = 'connected', disconnected_at = null, last_connected_at = now(),
        last_seen_at = now(), agent_version = u.agent_version, protocol_version = u.protocol_version,
        hostname = coalesce(nullif(u.hostname, ''), devices.hostname), applied_hash = u.applied_hash
      from unnest(${col((c) => c.deviceId)}::uuid[], ${col((c) => c.hello!.agentVersion)}::text[],
        ${col((c) => c.hello!.protocolVersion)}::int[], ${col((c) => c.hello!.hostname)}::text[],
        ${col((c) => c.hello!.appliedHash)}::text[]) as u(id, agent_version, protocol_version, hostname, applied_hash)
      where devices.id = u.id),
    s as (insert into device_sessions (device_id, session_id, instance_id, remote_address)
      select * from unnest(${col((c) => c.deviceId)}::uuid[], ${col((c) => c.sessionId)}::uuid[],
        ${col(() => instanceId)}::uuid[], ${col((c) => c.remoteAddress)}::text[])
      on conflict (device_id) do update set session_id = excluded.session_id, instance_id = excluded.instance_id,
        remote_address = excluded.remote_address, connected_at = now())
    select pg_notify('tern_gateway', p) from unnest(${col((c) =>
      JSON.stringify({ kind: "session", deviceId: c.deviceId, sessionId: c.sessionId, instanceId }),
    )}::text[]) as p`.execute(trx);
}

/** The instance that holds the device's link, when its heartbeat is fresh. */
export async function sessionOwner(db: Db, deviceId: string, staleMs: number): Promise<string | null> {
  const row = await db
    .selectFrom("device_sessions")
    .innerJoin("gateway_instances", "gateway_instances.id", "device_sessions.instance_id")
    .select("device_sessions.instance_id")
    .where("device_sessions.device_id", "=", deviceId)
    .where("gateway_instances.heartbeat_at", ">", sql<Date>`now() - ${`${staleMs} milliseconds`}::interval`)
    .executeTakeFirst();
  return row?.instance_id ?? null;
}

/**
 * Duty: instances silent for `staleMs` are dead; their sessions end, their
 * devices are disconnected, and jobs that were running on those links wait in
 * the queue again. The instance running the duty is alive whatever its row says
 * (a heartbeat late behind its own busy loop): its row is refreshed, never
 * reaped. It reads the sessions (one narrow row per connected device), never
 * the devices' rows: it runs every duty interval.
 */
export async function reapStaleLinks(
  db: Db,
  staleMs: number,
  selfId: string,
): Promise<{ id: string; organization_id: string }[]> {
  await db.updateTable("gateway_instances").set({ heartbeat_at: sql`now()` }).where("id", "=", selfId).execute();
  await sql`delete from gateway_instances where heartbeat_at < now() - ${`${staleMs} milliseconds`}::interval
    and id <> ${selfId}`.execute(db);
  // Device rows first, in id order, like every other writer (a hello locks the device, then its session).
  const locked = await sql<{ id: string }>`select id from devices
    where id in (select device_id from device_sessions s
      where not exists (select 1 from gateway_instances i where i.id = s.instance_id))
    order by id for no key update`.execute(db);
  return disconnectWithoutSession(
    db,
    locked.rows.map((r) => r.id),
  );
}

/**
 * Duty, once a minute: devices marked connected without a session (no writer leaves one so: a hello opens the
 * session in the statement that marks the device connected, a link's end and the reaper end both together; it
 * is a repair, for a database edited or restored by hand) are disconnected as `reapStaleLinks` disconnects a
 * dead instance's. It reads every device's row (`connection` is not indexed, so that connects and disconnects
 * stay in-place updates): at 10,000 devices 5,000 pages and 27–53 ms of PostgreSQL's time, which ran every
 * 5 s with the reaper.
 */
export async function disconnectUnsessioned(db: Db): Promise<{ id: string; organization_id: string }[]> {
  const locked = await sql<{ id: string }>`select id from devices
    where connection = 'connected' and not exists (select 1 from device_sessions s where s.device_id = devices.id)
    order by id for no key update`.execute(db);
  return disconnectWithoutSession(
    db,
    locked.rows.map((r) => r.id),
  );
}

/** Of `ids` (locked), the devices left without a live session: their dead sessions end, they are disconnected. */
async function disconnectWithoutSession(db: Db, ids: string[]): Promise<{ id: string; organization_id: string }[]> {
  if (ids.length === 0) return [];
  await sql`delete from device_sessions s where s.device_id = any(${ids}::uuid[])
    and not exists (select 1 from gateway_instances i where i.id = s.instance_id)`.execute(db);
  const rows = await sql<{
    id: string;
    organization_id: string;
  }>`update devices set connection = 'disconnected', disconnected_at = now()
    where id = any(${ids}::uuid[]) and connection = 'connected'
      and not exists (select 1 from device_sessions s where s.device_id = devices.id)
    returning id, organization_id`.execute(db);
  const gone = rows.rows.map((r) => r.id);
  if (gone.length) {
    // Their running config jobs go out again on the next link (agent actions and upgrades are not config work).
    await requeueRunningMany(db, gone);
  }
  return rows.rows;
}

/** On a clean shutdown: this instance's row goes (its links were closed and their sessions ended one by one). */
export async function unregisterInstance(db: Db, instanceId: string): Promise<void> {
  await db.deleteFrom("gateway_instances").where("id", "=", instanceId).execute();
}
