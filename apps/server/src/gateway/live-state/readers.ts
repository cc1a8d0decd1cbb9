/**
 * Reads of live state for the REST API and the notification engine: the last
 * status of a device, the latest figures of each tunnel end, tunnel samples
 * over time, VRRP states of groups' members. Every read is scoped by
 * organization. What a device reported can be up to one ingest flush
 * (TERN_INGEST_FLUSH_MS) old.
 */
import type { BgpState, Health, InterfaceState } from "@tern/protocol";
import { sql } from "kysely";
import type { Db, DeviceVrrpState } from "../../db/schema.ts";

export interface DeviceLiveState {
  deviceId: string;
  connection: "never" | "connected" | "disconnected";
  lastConnectedAt: Date | null;
  lastSeenAt: Date | null;
  desiredHash: string | null;
  appliedHash: string | null;
  autoSyncPaused: boolean;
  /** Null until the device sent its first status. */
  reported: {
    at: Date;
    receivedAt: Date;
    appliedHash: string | null;
    applying: boolean;
    interfaces: InterfaceState[];
    bgp: BgpState | null;
    vrrp: DeviceVrrpState[];
    health: Health | null;
  } | null;
}

export async function readDeviceLiveState(db: Db, orgId: string, deviceId: string): Promise<DeviceLiveState | null> {
  const row = await db
    .selectFrom("devices")
    .leftJoin("device_state", "device_state.device_id", "devices.id")
    .select([
      "devices.id",
      "devices.connection",
      "devices.last_connected_at",
      "devices.last_seen_at",
      "devices.desired_hash",
      "devices.applied_hash",
      "devices.auto_sync_paused",
      "device_state.reported_at",
      "device_state.received_at",
      "device_state.applied_hash as reported_hash",
      "device_state.applying",
      "device_state.interfaces",
      "device_state.bgp",
      "device_state.vrrp",
      "device_state.health",
    ])
    .where("devices.organization_id", "=", orgId)
    .where("devices.id", "=", deviceId)
    .executeTakeFirst();
  if (!row) return null;
  const received = row.reported_at ? row.received_at : null;
  const lastSeen = received && (!row.last_seen_at || received > row.last_seen_at) ? received : row.last_seen_at;
  return {
    deviceId: row.id,
    connection: row.connection,
    lastConnectedAt: row.last_connected_at,
    lastSeenAt: lastSeen,
    desiredHash: row.desired_hash,
    appliedHash: row.applied_hash,
    autoSyncPaused: row.auto_sync_paused,
    reported: row.reported_at
      ? {
          at: row.reported_at,
          receivedAt: row.received_at!,
          appliedHash: row.reported_hash ?? null,
          applying: row.applying ?? false,
          interfaces: row.interfaces ?? [],
          bgp: row.bgp ?? null,
          vrrp: row.vrrp ?? [],
          health: row.health ?? null,
        }
      : null,
  };
}

export interface TunnelEndFigures {
  deviceId: string;
  at: Date;
  up: boolean;
  loss: number;
  rtt: number;
  jitter: number;
  samples: number;
}

/** The latest figures of each end (`a`, `b`) of the organization's tunnels among `tunnelIds`. */
export async function readTunnelLatest(
  db: Db,
  orgId: string,
  tunnelIds: readonly string[],
): Promise<Map<string, { a: TunnelEndFigures | null; b: TunnelEndFigures | null }>> {
  const result = new Map<string, { a: TunnelEndFigures | null; b: TunnelEndFigures | null }>();
  if (tunnelIds.length === 0) return result;
  const rows = await db
    .selectFrom("tunnel_latest")
    .innerJoin("tunnels", "tunnels.id", "tunnel_latest.tunnel_id")
    .selectAll("tunnel_latest")
    .where("tunnels.organization_id", "=", orgId)
    .where("tunnel_latest.tunnel_id", "=", sql<string>`any(${[...tunnelIds]}::uuid[])`)
    .execute();
  for (const id of tunnelIds) result.set(id, { a: null, b: null });
  for (const r of rows) {
    const entry = result.get(r.tunnel_id)!;
    entry[r.side.trim() as "a" | "b"] = {
      deviceId: r.device_id,
      at: r.at,
      up: r.up,
      loss: r.loss,
      rtt: r.rtt,
      jitter: r.jitter,
      samples: r.samples,
    };
  }
  return result;
}

export interface TunnelSample extends TunnelEndFigures {
  side: "a" | "b";
}

/** Samples of one tunnel of the organization between `from` and `to` (oldest first), at most `limit`. */
export async function readTunnelSamples(
  db: Db,
  orgId: string,
  tunnelId: string,
  range: { from: Date; to: Date; limit?: number },
): Promise<TunnelSample[]> {
  const rows = await db
    .selectFrom("tunnel_samples")
    .innerJoin("tunnels", "tunnels.id", "tunnel_samples.tunnel_id")
    .selectAll("tunnel_samples")
    .where("tunnels.organization_id", "=", orgId)
    .where("tunnel_samples.tunnel_id", "=", tunnelId)
    .where("tunnel_samples.at", ">=", range.from)
    .where("tunnel_samples.at", "<=", range.to)
    .orderBy("tunnel_samples.at")
    .limit(range.limit ?? 10_000)
    .execute();
  return rows.map((r) => ({
    side: r.side.trim() as "a" | "b",
    deviceId: r.device_id,
    at: r.at,
    up: r.up,
    loss: r.loss,
    rtt: r.rtt,
    jitter: r.jitter,
    samples: r.samples,
  }));
}

/** The VRRP state each member device of the organization's groups last reported (`unknown` when it has not). */
export async function readVrrpStates(
  db: Db,
  orgId: string,
  groupIds?: readonly string[],
): Promise<
  { groupId: string; deviceId: string; state: DeviceVrrpState["state"]; since: string | null; reportedAt: Date | null }[]
> {
  let q = db
    .selectFrom("vrrp_members")
    .innerJoin("vrrp_groups", "vrrp_groups.id", "vrrp_members.group_id")
    .leftJoin("device_state", "device_state.device_id", "vrrp_members.device_id")
    .select(["vrrp_members.group_id", "vrrp_members.device_id", "device_state.vrrp", "device_state.received_at"])
    .where("vrrp_groups.organization_id", "=", orgId)
    .orderBy("vrrp_members.group_id")
    .orderBy("vrrp_members.position");
  if (groupIds) {
    if (groupIds.length === 0) return [];
    q = q.where("vrrp_members.group_id", "=", sql<string>`any(${[...groupIds]}::uuid[])`);
  }
  const rows = await q.execute();
  return rows.map((r) => {
    const own = r.vrrp?.find((v) => v.groupId === r.group_id);
    return {
      groupId: r.group_id,
      deviceId: r.device_id,
      state: own?.state ?? "unknown",
      since: own?.since ?? null,
      reportedAt: own ? r.received_at : null,
    };
  });
}
