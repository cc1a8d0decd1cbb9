/**
 * Status reads of a device (`GET /devices/{id}/interfaces/{interfaceId}/status`,
 * `GET /devices/{id}/bgp/status`). The state itself comes from the device:
 * what it last reported in a status message, or a fresh read over its link.
 * Both belong to the device gateway (issue 5), which installs a
 * `DeviceStatusReader` in `AppDeps.deviceStatus`. Until then (and for a
 * device that never reported) the answer says so explicitly:
 * `source: "unknown", state: "unknown"`, not an error.
 *
 * Whatever a reader returns is parsed with the protocol schema before it
 * leaves, so the API never shows a field the contract removed (the LTE `text`
 * field of 5.x: `LteStatus` is strict since 6.3.1).
 */
import {
  type BgpState,
  BgpStatusResponse,
  type DeviceInterface,
  type InterfaceState,
  InterfaceStatusResponse,
} from "@tern/protocol";
import { notFound } from "../../http/errors.ts";
import type { ServiceCtx } from "../context.ts";

/** The device a read is about, as the reader needs it (already checked to be in the caller's organization). */
export interface StatusDevice {
  id: string;
  orgId: string;
  connection: "never" | "connected" | "disconnected";
}

/** A state with where it came from: `reported` = the last status message, `live` = asked just now. */
export interface StatusRead<T> {
  source: "reported" | "live";
  state: T;
  reportedAt: Date;
}

export interface StatusReadOptions {
  /** Ask a connected device for a fresh read (the gateway decides; a reader may fall back to the last report). */
  live?: boolean;
}

/** Installed by the device gateway. Each method returns null when it knows nothing about the device. */
export interface DeviceStatusReader {
  interfaceState(
    ctx: ServiceCtx,
    device: StatusDevice,
    iface: DeviceInterface,
    options: StatusReadOptions,
  ): Promise<StatusRead<InterfaceState> | null>;
  bgpState(ctx: ServiceCtx, device: StatusDevice, options: StatusReadOptions): Promise<StatusRead<BgpState> | null>;
}

/** The reader before the gateway exists: nothing was ever reported. */
export const NOTHING_REPORTED: DeviceStatusReader = {
  interfaceState: async () => null,
  bgpState: async () => null,
};

async function loadStatusDevice(ctx: ServiceCtx, id: string) {
  const row = await ctx.db
    .selectFrom("devices")
    .select(["id", "organization_id", "connection", "interfaces"])
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) throw notFound("device");
  return { device: { id: row.id, orgId: row.organization_id, connection: row.connection }, interfaces: row.interfaces };
}

export async function getInterfaceStatus(
  ctx: ServiceCtx,
  input: { deviceId: string; interfaceId: string } & StatusReadOptions,
  reader: DeviceStatusReader = NOTHING_REPORTED,
): Promise<InterfaceStatusResponse> {
  const { device, interfaces } = await loadStatusDevice(ctx, input.deviceId);
  const iface = interfaces.find((i) => i.id === input.interfaceId);
  if (!iface) throw notFound("interface");
  const read = await reader.interfaceState(ctx, device, iface, { live: input.live });
  return InterfaceStatusResponse.parse({
    deviceId: device.id,
    interfaceId: iface.id,
    source: read?.source ?? "unknown",
    state: read?.state ?? "unknown",
    reportedAt: read ? read.reportedAt.toISOString() : null,
  });
}

export async function getBgpStatus(
  ctx: ServiceCtx,
  input: { deviceId: string } & StatusReadOptions,
  reader: DeviceStatusReader = NOTHING_REPORTED,
): Promise<BgpStatusResponse> {
  const { device } = await loadStatusDevice(ctx, input.deviceId);
  const read = await reader.bgpState(ctx, device, { live: input.live });
  return BgpStatusResponse.parse({
    deviceId: device.id,
    source: read?.source ?? "unknown",
    state: read?.state ?? "unknown",
    reportedAt: read ? read.reportedAt.toISOString() : null,
  });
}
