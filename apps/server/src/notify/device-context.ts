/**
 * What the rule engine needs to know about a device to judge its status
 * messages: its name, assigned interfaces, configured BGP neighbors, and the
 * tunnels it is an end of (number, its side and local interface, the far
 * end's name, per-tunnel thresholds). Loaded once per link and refreshed
 * after a while or when the device applies a new config, so evaluating a
 * status needs no query.
 */
import type { TunnelThresholds } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import { sharedString } from "../memory/shared-string.ts";
import { anyUuid } from "../services/desired-config.ts";

export interface ContextInterface {
  id: string;
  devId: string;
  name: string;
  type: string;
}

export interface ContextTunnel {
  id: string;
  num: number;
  side: "a" | "b";
  /** The id of this device's interface the tunnel leaves from. */
  localInterfaceId: string;
  /** The other end: a device's or a peer's name. */
  farName: string;
  /** The other end's device, null for a peer. */
  farDeviceId: string | null;
  thresholds: TunnelThresholds;
}

export interface DeviceContext {
  deviceId: string;
  orgId: string;
  name: string;
  interfaces: ContextInterface[];
  bgpNeighbors: readonly { ip: string; remoteASN: number }[];
  tunnels: Map<string, ContextTunnel>;
  loadedAt: number;
}

/** Most devices run no BGP: their contexts share this empty list. */
const NO_NEIGHBORS: readonly { ip: string; remoteASN: number }[] = Object.freeze([]);

/** Most tunnels set no thresholds of their own: their contexts share this one. */
const NO_THRESHOLDS: TunnelThresholds = Object.freeze({ rtt: null, dropRate: null });

/** The devices (each of its organization) whose context to load. */
export interface DeviceRef {
  orgId: string;
  deviceId: string;
}

/**
 * The contexts of several devices in two statements (a reconnecting fleet's
 * devices load theirs together), in `refs` order; null for a device that is
 * not (or no longer) in its organization.
 */
export async function loadDeviceContexts(db: Db, refs: readonly DeviceRef[]): Promise<(DeviceContext | null)[]> {
  if (refs.length === 0) return [];
  const ids = [...new Set(refs.map((r) => r.deviceId))];
  const devices = await db
    .selectFrom("devices")
    .select(["id", "organization_id", "name", "interfaces", "bgp"])
    .where("id", "=", anyUuid(ids))
    .execute();
  const tunnels = await db
    .selectFrom("tunnels as t")
    .leftJoin("devices as a", "a.id", "t.device_a")
    .leftJoin("devices as b", "b.id", "t.device_b")
    .leftJoin("peers as p", "p.id", "t.peer_id")
    .select([
      "t.id",
      "t.organization_id",
      "t.num",
      "t.device_a",
      "t.device_b",
      "t.interface_a",
      "t.interface_b",
      "t.notifications",
      "a.name as a_name",
      sql<string | null>`coalesce(b.name, p.name)`.as("b_name"),
    ])
    .where((eb) => eb.or([eb("t.device_a", "=", anyUuid(ids)), eb("t.device_b", "=", anyUuid(ids))]))
    .execute();
  const byId = new Map(devices.map((d) => [d.id, d]));
  // Each tunnel under both of its ends (a peer tunnel has one).
  const tunnelsOf = new Map<string, typeof tunnels>();
  for (const t of tunnels)
    for (const end of new Set([t.device_a, t.device_b])) {
      if (!end) continue;
      const list = tunnelsOf.get(end);
      if (list) list.push(t);
      else tunnelsOf.set(end, [t]);
    }
  const loadedAt = Date.now();
  return refs.map(({ orgId, deviceId }) => {
    const device = byId.get(deviceId);
    if (!device || device.organization_id !== orgId) return null;
    const map = new Map<string, ContextTunnel>();
    for (const t of tunnelsOf.get(deviceId) ?? []) {
      if (t.organization_id !== orgId) continue;
      const side = t.device_a === deviceId ? "a" : "b";
      // Contexts live as long as their links: each id and name held as the one instance the others share.
      const id = sharedString(t.id);
      map.set(id, {
        id,
        num: t.num,
        side,
        localInterfaceId: sharedString((side === "a" ? t.interface_a : t.interface_b) ?? ""),
        farName: sharedString((side === "a" ? t.b_name : t.a_name) ?? ""),
        farDeviceId: sharedString(side === "a" ? t.device_b : t.device_a),
        thresholds: t.notifications?.rtt == null && t.notifications?.dropRate == null ? NO_THRESHOLDS : t.notifications,
      });
    }
    return {
      deviceId: sharedString(deviceId),
      orgId: sharedString(orgId),
      name: sharedString(device.name),
      interfaces: device.interfaces
        .filter((i) => i.isAssigned && (i.type === "WAN" || i.type === "LAN"))
        .map((i) => ({ id: sharedString(i.id), devId: sharedString(i.devId), name: sharedString(i.name), type: i.type })),
      bgpNeighbors: device.bgp.enable ? device.bgp.neighbors.map((n) => ({ ip: n.ip, remoteASN: n.remoteASN })) : NO_NEIGHBORS,
      tunnels: map,
      loadedAt,
    };
  });
}

export async function loadDeviceContext(db: Db, orgId: string, deviceId: string): Promise<DeviceContext | null> {
  return (await loadDeviceContexts(db, [{ orgId, deviceId }]))[0]!;
}
