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
  bgpNeighbors: { ip: string; remoteASN: number }[];
  tunnels: Map<string, ContextTunnel>;
  loadedAt: number;
}

export async function loadDeviceContext(db: Db, orgId: string, deviceId: string): Promise<DeviceContext | null> {
  const device = await db
    .selectFrom("devices")
    .select(["name", "interfaces", "bgp"])
    .where("organization_id", "=", orgId)
    .where("id", "=", deviceId)
    .executeTakeFirst();
  if (!device) return null;
  const tunnels = await db
    .selectFrom("tunnels as t")
    .leftJoin("devices as a", "a.id", "t.device_a")
    .leftJoin("devices as b", "b.id", "t.device_b")
    .leftJoin("peers as p", "p.id", "t.peer_id")
    .select([
      "t.id",
      "t.num",
      "t.device_a",
      "t.device_b",
      "t.interface_a",
      "t.interface_b",
      "t.notifications",
      "a.name as a_name",
      sql<string | null>`coalesce(b.name, p.name)`.as("b_name"),
    ])
    .where("t.organization_id", "=", orgId)
    .where((eb) => eb.or([eb("t.device_a", "=", deviceId), eb("t.device_b", "=", deviceId)]))
    .execute();
  const map = new Map<string, ContextTunnel>();
  for (const t of tunnels) {
    const side = t.device_a === deviceId ? "a" : "b";
    map.set(t.id, {
      id: t.id,
      num: t.num,
      side,
      localInterfaceId: (side === "a" ? t.interface_a : t.interface_b) ?? "",
      farName: (side === "a" ? t.b_name : t.a_name) ?? "",
      farDeviceId: side === "a" ? t.device_b : t.device_a,
      thresholds: t.notifications,
    });
  }
  return {
    deviceId,
    orgId,
    name: device.name,
    interfaces: device.interfaces
      .filter((i) => i.isAssigned && (i.type === "WAN" || i.type === "LAN"))
      .map((i) => ({ id: i.id, devId: i.devId, name: i.name, type: i.type })),
    bgpNeighbors: device.bgp.enable ? device.bgp.neighbors.map((n) => ({ ip: n.ip, remoteASN: n.remoteASN })) : [],
    tunnels: map,
    loadedAt: Date.now(),
  };
}
