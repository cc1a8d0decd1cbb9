/**
 * Permission masks of access tokens (get=1 post=2 put=4 del=8 per resource,
 * the protocol's PERM): in words for the list, and toggled bit by bit in the
 * creation form.
 */
import {
  PERM,
  PERMISSION_RESOURCES,
  type PermissionBit,
  type PermissionResource,
  type Permissions,
  ROLE_PERMISSIONS,
  type Role,
} from "@tern/protocol";

export const BITS = Object.keys(PERM) as PermissionBit[];

/** "get post put del", "get", or "none". */
export function maskWords(mask: number | undefined): string {
  const bits = BITS.filter((b) => ((mask ?? 0) & PERM[b]) !== 0);
  return bits.length === 0 ? "none" : bits.join(" ");
}

export function toggleBit(perms: Permissions, resource: PermissionResource, bit: PermissionBit): Permissions {
  return { ...perms, [resource]: (perms[resource] ?? 0) ^ PERM[bit] };
}

/** The role's masks, a fresh copy to edit. */
export function roleMasks(role: Role): Permissions {
  return { ...ROLE_PERMISSIONS[role] };
}

/** Resources whose masks differ from the role's (what makes a token custom). */
export function differsFromRole(perms: Partial<Record<PermissionResource, number>>, role: Role): PermissionResource[] {
  return PERMISSION_RESOURCES.filter((r) => (perms[r] ?? 0) !== (ROLE_PERMISSIONS[role][r] ?? 0));
}
