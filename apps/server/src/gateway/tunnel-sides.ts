/** Which tunnels a device is an end of, and which end: a status may report only these. */
import type { Db } from "../db/schema.ts";
import { sharedString } from "../memory/shared-string.ts";
import { anyUuid } from "../services/desired-config.ts";

export async function loadTunnelSides(db: Db, deviceId: string): Promise<Map<string, "a" | "b">> {
  return (await loadTunnelSidesMany(db, [deviceId])).get(deviceId)!;
}

/** loadTunnelSides for several devices in one query; every id asked for has an entry. */
export async function loadTunnelSidesMany(db: Db, deviceIds: readonly string[]): Promise<Map<string, Map<string, "a" | "b">>> {
  const sides = new Map(deviceIds.map((id) => [id, new Map<string, "a" | "b">()]));
  if (deviceIds.length === 0) return sides;
  const ids = [...sides.keys()];
  const rows = await db
    .selectFrom("tunnels")
    .select(["id", "device_a", "device_b"])
    .where((eb) => eb.or([eb("device_a", "=", anyUuid(ids)), eb("device_b", "=", anyUuid(ids))]))
    .execute();
  for (const r of rows) {
    const id = sharedString(r.id);
    sides.get(r.device_a)?.set(id, "a");
    if (r.device_b) sides.get(r.device_b)?.set(id, "b");
  }
  return sides;
}
