/** Which tunnels a device is an end of, and which end: a status may report only these. */
import { sql } from "kysely";
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

/**
 * loadTunnelSides as a column of a query over `devices` (the hello's locking read, hello-batch.ts): the row's
 * tunnels as [tunnel id, end] pairs; `tunnelSidesOf` makes them the map loadTunnelSides answers.
 */
export const tunnelSidesColumn = sql<[string, "a" | "b"][]>`(select coalesce(json_agg(json_build_array(t.id,
  case when t.device_b = devices.id then 'b' else 'a' end)), '[]') from tunnels t
  where t.device_a = devices.id or t.device_b = devices.id)`;

export function tunnelSidesOf(pairs: readonly [string, "a" | "b"][]): Map<string, "a" | "b"> {
  return new Map(pairs.map(([id, side]) => [sharedString(id), side]));
}
