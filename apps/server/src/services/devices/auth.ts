/**
 * For the device gateway (issue 5): who a device token belongs to, whether it
 * may connect, and the service context it acts in. A device token is issued
 * by `POST /connect/register` (shown once, stored as a SHA-256 hash, rotated
 * by every re-registration of the machine) and speaks only for its device.
 */
import type { Actor } from "../../auth/access.ts";
import { hashSecretToken, TOKEN_PREFIX } from "../../auth/secret-tokens.ts";
import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { type ServiceCtx, systemCtx } from "../context.ts";

export interface DeviceIdentity {
  id: string;
  name: string;
  machineId: string;
  isApproved: boolean;
  org: { id: string; accountId: string; name: string };
}

/** The device holding `token`, or null (unknown, malformed, or rotated away by a re-registration). */
export async function deviceByToken(db: Db, token: string): Promise<DeviceIdentity | null> {
  if (!token.startsWith(TOKEN_PREFIX.device) || token.length > 200) return null;
  const row = await db
    .selectFrom("devices as d")
    .innerJoin("organizations as o", "o.id", "d.organization_id")
    .select(["d.id", "d.name", "d.machine_id", "d.is_approved", "o.id as org_id", "o.account_id", "o.name as org_name"])
    .where("d.device_token_hash", "=", hashSecretToken(token))
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    name: row.name,
    machineId: row.machine_id,
    isApproved: row.is_approved,
    org: { id: row.org_id, accountId: row.account_id, name: row.org_name },
  };
}

export type DeviceAdmission =
  | { ok: true; device: DeviceIdentity }
  | { ok: false; reason: "unknown-token" | "not-approved"; message: string };

/** Whether a websocket presenting `token` may be accepted: a known device that an admin approved. */
export async function admitDevice(db: Db, token: string): Promise<DeviceAdmission> {
  const device = await deviceByToken(db, token);
  if (!device) return { ok: false, reason: "unknown-token", message: "unknown device token; register the device again" };
  if (!device.isApproved)
    return {
      ok: false,
      reason: "not-approved",
      message: `device ${device.name} is waiting for approval by an administrator (PUT /api/devices/${device.id} isApproved: true)`,
    };
  return { ok: true, device };
}

/** The actor a device's own reports are audited as. */
export const deviceActor = (device: Pick<DeviceIdentity, "id">): Actor => ({
  kind: "device",
  label: `device:${device.id}`,
  userId: null,
  tokenId: null,
});

/** A service context acting for the device in its organization. */
export function deviceCtx(deps: AppDeps, device: DeviceIdentity): ServiceCtx {
  return systemCtx(deps, device.org, deviceActor(device));
}
