/**
 * The `device_lan_subnets` side table: written with every write of a device's
 * interfaces or firewall (same transaction), and asked through its GiST index
 * which devices of the organization a LAN overlap check has to look at.
 */
import type { DeviceInterface, Firewall } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { type LanIndexRow, lanIndexRows } from "./rows.ts";

export interface LanIndexedDevice {
  id: string;
  organizationId: string;
  interfaces: readonly DeviceInterface[];
  firewall: Firewall;
}

/** Replaces the device's rows with what its interfaces and firewall give now. */
export async function syncLanIndex(db: Db, device: LanIndexedDevice): Promise<void> {
  await db.deleteFrom("device_lan_subnets").where("device_id", "=", device.id).execute();
  const rows = lanIndexRows(device);
  if (rows.length === 0) return;
  await db
    .insertInto("device_lan_subnets")
    .values(rows.map((r) => ({ device_id: device.id, organization_id: device.organizationId, kind: r.kind, subnet: r.subnet })))
    .execute();
}

/**
 * The other devices of the organization with a row of the probe's kind that
 * overlaps the probe (`&&`: one network contains the other), by id. One index
 * probe per network, however many devices the organization has.
 */
export async function overlappingDeviceIds(
  db: Db,
  orgId: string,
  exceptId: string,
  probes: readonly LanIndexRow[],
): Promise<string[]> {
  if (probes.length === 0) return [];
  // Array literals as text (as anyUuid does): the same on the pg driver and PGlite. Neither kind nor a
  // network in canonical form holds a character that needs quoting in one.
  const nets = `{${probes.map((p) => p.subnet).join(",")}}`;
  const kinds = `{${probes.map((p) => p.kind).join(",")}}`;
  const rows = await sql<{ device_id: string }>`
    select distinct s.device_id
    from unnest(${nets}::cidr[], ${kinds}::text[]) as q(net, kind)
    join device_lan_subnets s on s.subnet && q.net and s.kind = q.kind
    where s.organization_id = ${orgId} and s.device_id <> ${exceptId}
    order by s.device_id`.execute(db);
  return rows.rows.map((r) => r.device_id);
}
