/** Which tunnels a device is an end of, and which end: a status may report only these. */
import type { Db } from "../db/schema.ts";

export async function loadTunnelSides(db: Db, deviceId: string): Promise<Map<string, "a" | "b">> {
  const rows = await db
    .selectFrom("tunnels")
    .select(["id", "device_a"])
    .where((eb) => eb.or([eb("device_a", "=", deviceId), eb("device_b", "=", deviceId)]))
    .execute();
  return new Map(rows.map((r) => [r.id, r.device_a === deviceId ? "a" : "b"]));
}
