/**
 * A device and the far ends of its tunnels, whose configs name its addresses:
 * what the public-address and WAN-address trackers re-configure together when
 * one of its addresses changes.
 */
import type { DeviceInterface } from "@tern/protocol";
import type { Db } from "../../db/schema.ts";

/** Devices at the other end of the device's tunnels (their config names its address). */
export async function tunnelNeighbours(db: Db, orgId: string, deviceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("tunnels")
    .select(["device_a", "device_b"])
    .where("organization_id", "=", orgId)
    .where((eb) => eb.or([eb("device_a", "=", deviceId), eb("device_b", "=", deviceId)]))
    .execute();
  const ids = new Set<string>();
  for (const r of rows) for (const id of [r.device_a, r.device_b]) if (id && id !== deviceId) ids.add(id);
  return [...ids];
}

/**
 * In a transaction: locks the device and its tunnel neighbours in id order (as
 * queueConfigJobs does, so no writer of several devices deadlocks with this
 * one) and reads the device's interfaces; null when the device is gone.
 */
export async function lockWithNeighbours(
  trx: Db,
  orgId: string,
  deviceId: string,
): Promise<{ neighbours: string[]; interfaces: DeviceInterface[] } | null> {
  const neighbours = await tunnelNeighbours(trx, orgId, deviceId);
  await trx
    .selectFrom("devices")
    .select("id")
    .where("id", "in", [deviceId, ...neighbours])
    .orderBy("id")
    .forNoKeyUpdate()
    .execute();
  const row = await trx.selectFrom("devices").select(["interfaces"]).where("id", "=", deviceId).executeTakeFirst();
  return row ? { neighbours, interfaces: row.interfaces } : null;
}
