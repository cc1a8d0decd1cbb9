/**
 * The permission each remote action needs, with the per-resource masks of
 * tenancy.ts (get 1, post 2, put 4, del 8). The action routes require `put`
 * on devices (checked before the body is read); an action that needs more
 * is checked here against the caller's masks. Diagnostics (ping, traceroute,
 * DNS, logs: their own routes) need only `get`, so a viewer can run them.
 */
import type { DeviceAction, PermissionBit, PermissionResource } from "@tern/protocol";
import { hasPermission } from "../../../auth/permissions.ts";
import { forbidden } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";

export interface ActionPermission {
  resource: PermissionResource;
  bit: PermissionBit;
}

export const ACTION_PERMISSIONS: Record<DeviceAction, ActionPermission> = {
  /** Sends the config the admin already made: as changing it. */
  sync: { resource: "devices", bit: "put" },
  "restart-agent": { resource: "devices", bit: "put" },
  stop: { resource: "devices", bit: "put" },
  start: { resource: "devices", bit: "put" },
  /** Removes everything from the router and withdraws its approval: as deleting the device (owners and managers). */
  reset: { resource: "devices", bit: "del" },
};

/** FORBIDDEN unless the caller holds what `action` needs. */
export function assertActionAllowed(ctx: Pick<ServiceCtx, "permissions">, action: DeviceAction): void {
  const need = ACTION_PERMISSIONS[action];
  if (!hasPermission(ctx.permissions, need.resource, need.bit))
    throw forbidden(`the '${action}' action needs the '${need.bit}' permission on '${need.resource}'`);
}
