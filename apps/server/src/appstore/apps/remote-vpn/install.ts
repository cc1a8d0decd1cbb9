/**
 * Installing the remote worker VPN on a device: checks the device and its
 * settings, then stores one installation row. The caller queues the job.
 */
import { randomUUID } from "node:crypto";
import { type Cidr, cidrsOverlap, formatNetwork, parseCidr } from "@tern/protocol";
import type { z } from "zod";
import { toJson } from "../../../db/json.ts";
import { ApiError, validationFailed } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../../services/context.ts";
import type { InstallParams } from "./params.ts";

export interface RemoteVpnSettings {
  pool: string;
  dns: string[];
  subnets: string[];
}

interface DeviceInterfaceLike {
  type?: string;
  IPv4?: string;
  IPv4Mask?: number | null;
}

/** The LAN subnets of a device (its LAN interfaces' networks). */
export function lanSubnets(interfaces: readonly DeviceInterfaceLike[]): string[] {
  const out = new Set<string>();
  for (const i of interfaces) {
    if (i.type !== "LAN" || !i.IPv4 || i.IPv4Mask == null) continue;
    const c = parseCidr(`${i.IPv4}/${i.IPv4Mask}`);
    if (c) out.add(formatNetwork(c));
  }
  return [...out];
}

const cidr = (s: string) => parseCidr(s) as Cidr;

export async function installOnDevice(
  ctx: ServiceCtx,
  purchaseId: string,
  params: z.output<typeof InstallParams>,
): Promise<{ device: { id: string; name: string }; settings: RemoteVpnSettings; replaced: boolean }> {
  const device = await ctx.db
    .selectFrom("devices")
    .select(["id", "name", "interfaces"])
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", params.device)
    .executeTakeFirst();
  if (!device)
    throw new ApiError("NOT_FOUND", "device not found", [
      { path: "params.device", message: "no such device in this organization" },
    ]);
  const lans = lanSubnets(device.interfaces as DeviceInterfaceLike[]);
  const subnets = [...new Set((params.subnets ?? lans).map((s) => formatNetwork(cidr(s))))];
  if (subnets.length === 0)
    throw validationFailed("no subnets for the split tunnel", [
      { path: "params.subnets", message: `device ${device.name} has no LAN subnet: give the subnets clients may reach` },
    ]);
  const pool = cidr(params.pool);
  if (pool.prefix < 16 || pool.prefix > 30)
    throw validationFailed("pool size", [{ path: "params.pool", message: "the pool must be a /16 to /30" }]);
  const clash = [...subnets, ...lans].find((s) => cidrsOverlap(pool, cidr(s)));
  if (clash)
    throw validationFailed("pool overlaps a LAN", [
      { path: "params.pool", message: `${formatNetwork(pool)} overlaps ${clash}, which clients reach or the device serves` },
    ]);
  const others = await ctx.db
    .selectFrom("app_installations")
    .innerJoin("devices", "devices.id", "app_installations.device_id")
    .select(["devices.name", "app_installations.settings"])
    .where("app_installations.purchase_id", "=", purchaseId)
    .where("app_installations.device_id", "!=", device.id)
    .execute();
  const taken = others.find((o) => cidrsOverlap(pool, cidr((o.settings as unknown as RemoteVpnSettings).pool)));
  if (taken)
    throw new ApiError("CONFLICT", "pool in use", [
      { path: "params.pool", message: `overlaps the pool of ${taken.name}: each device needs its own, so replies route back` },
    ]);
  const settings: RemoteVpnSettings = { pool: formatNetwork(pool), dns: params.dns, subnets };
  const existing = await ctx.db
    .updateTable("app_installations")
    .set({ settings: toJson(settings) })
    .where("purchase_id", "=", purchaseId)
    .where("device_id", "=", device.id)
    .returning("id")
    .executeTakeFirst();
  if (!existing)
    await ctx.db
      .insertInto("app_installations")
      .values({
        id: randomUUID(),
        organization_id: ctx.org.id,
        purchase_id: purchaseId,
        device_id: device.id,
        settings: toJson(settings),
      })
      .execute();
  return { device: { id: device.id, name: device.name }, settings, replaced: existing !== undefined };
}

/** Removes the installation; false when the device did not run the application. */
export async function uninstallFromDevice(ctx: ServiceCtx, purchaseId: string, deviceId: string): Promise<boolean> {
  const r = await ctx.db
    .deleteFrom("app_installations")
    .where("organization_id", "=", ctx.org.id)
    .where("purchase_id", "=", purchaseId)
    .where("device_id", "=", deviceId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Every device running the application. */
export async function installedDevices(ctx: ServiceCtx, purchaseId: string): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom("app_installations")
    .select("device_id")
    .where("organization_id", "=", ctx.org.id)
    .where("purchase_id", "=", purchaseId)
    .orderBy("device_id")
    .execute();
  return rows.map((r) => r.device_id);
}
