/**
 * What the signed-in member may do in the current organization: the role's
 * permission masks from the protocol (ROLE_PERMISSIONS, the server's own
 * rule). The console hides write controls the role cannot use; the server
 * refuses them anyway. Imported by pages only (lazy chunks): it brings the
 * protocol's schemas, which the initial bundle does not need.
 */
import { PERM, type PermissionBit, type PermissionResource, ROLE_PERMISSIONS, type Role } from "@tern/protocol";
import { useSession } from "./session-context.ts";

export function roleCan(role: Role | null | undefined, resource: PermissionResource, bit: PermissionBit): boolean {
  if (!role) return false;
  const mask = ROLE_PERMISSIONS[role]?.[resource] ?? 0;
  return (mask & PERM[bit]) !== 0;
}

/** `useCan("devices", "put")`: may the member change devices in the current organization? */
export function useCan(resource: PermissionResource, bit: PermissionBit): boolean {
  return roleCan(useSession().org?.role, resource, bit);
}
