/**
 * Which devices a change to some devices touches, and which of them get jobs.
 * A device's compiled config reads the other end of each of its tunnels
 * (addresses, published LAN subnets) and its VRRP groups, so a change to a
 * device recompiles those too; `queueConfigJobs` then queues jobs only where
 * the desired config really changed.
 */
import type { Db } from "../../db/schema.ts";
import { anyUuid } from "../desired-config.ts";

/** The far ends of the tunnels of `deviceIds`, not counting `deviceIds` themselves. */
export async function tunnelFarEnds(db: Db, orgId: string, deviceIds: readonly string[]): Promise<string[]> {
  if (deviceIds.length === 0) return [];
  const rows = await db
    .selectFrom("tunnels")
    .select(["device_a", "device_b"])
    .where("organization_id", "=", orgId)
    .where((eb) => eb.or([eb("device_a", "=", anyUuid(deviceIds)), eb("device_b", "=", anyUuid(deviceIds))]))
    .execute();
  const own = new Set(deviceIds);
  return [...new Set(rows.flatMap((r) => [r.device_a, r.device_b]).filter((id): id is string => !!id && !own.has(id)))];
}

/** The other members of the VRRP groups of `deviceIds`, not counting `deviceIds` themselves. */
export async function vrrpPeers(db: Db, orgId: string, deviceIds: readonly string[]): Promise<string[]> {
  if (deviceIds.length === 0) return [];
  const rows = await db
    .selectFrom("vrrp_members as m")
    .innerJoin("vrrp_groups as g", "g.id", "m.group_id")
    .innerJoin("vrrp_members as mine", "mine.group_id", "m.group_id")
    .select("m.device_id")
    .distinct()
    .where("g.organization_id", "=", orgId)
    .where("mine.device_id", "=", anyUuid(deviceIds))
    .execute();
  const own = new Set(deviceIds);
  return rows.map((r) => r.device_id).filter((id) => !own.has(id));
}

/** Devices whose config depends on `deviceIds`: tunnel far ends and VRRP peers. */
export async function dependentDevices(db: Db, orgId: string, deviceIds: readonly string[]): Promise<string[]> {
  return [...new Set([...(await tunnelFarEnds(db, orgId, deviceIds)), ...(await vrrpPeers(db, orgId, deviceIds))])];
}

/**
 * The approved ones among `deviceIds`. Unapproved devices get no jobs (they
 * cannot connect to take them); approving a device queues one with its whole
 * config.
 */
export async function approvedDevices(db: Db, orgId: string, deviceIds: readonly string[]): Promise<string[]> {
  if (deviceIds.length === 0) return [];
  const rows = await db
    .selectFrom("devices")
    .select("id")
    .where("organization_id", "=", orgId)
    .where("id", "=", anyUuid(deviceIds))
    .where("is_approved", "=", true)
    .execute();
  return rows.map((r) => r.id);
}
