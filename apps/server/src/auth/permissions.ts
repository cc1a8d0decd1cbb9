/**
 * The permission model of the protocol package: each role has a mask per
 * resource (get=1 post=2 put=4 del=8); access tokens carry their own masks,
 * never more than their creator's.
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

export const ROLE_RANK: Record<Role, number> = { viewer: 1, manager: 2, owner: 3 };

/** The stronger of two roles (null = none). */
export function strongerRole(a: Role | null, b: Role | null): Role | null {
  if (!a) return b;
  if (!b) return a;
  return ROLE_RANK[a] >= ROLE_RANK[b] ? a : b;
}

/** No rights at all. */
export const NO_PERMISSIONS: Permissions = Object.fromEntries(PERMISSION_RESOURCES.map((r) => [r, 0])) as Permissions;

/** A full mask record: named masks as given, the rest from the role's defaults. */
export function completePermissions(role: Role, masks: Partial<Permissions>): Permissions {
  return Object.fromEntries(PERMISSION_RESOURCES.map((r) => [r, masks[r] ?? ROLE_PERMISSIONS[role][r]])) as Permissions;
}

/** Resource by resource, only the bits both hold. */
export function intersectPermissions(a: Permissions, b: Permissions): Permissions {
  return Object.fromEntries(PERMISSION_RESOURCES.map((r) => [r, (a[r] ?? 0) & (b[r] ?? 0)])) as Permissions;
}

/** The resources where `wanted` has a bit that `held` lacks. */
export function exceedingResources(wanted: Permissions, held: Permissions): PermissionResource[] {
  return PERMISSION_RESOURCES.filter((r) => ((wanted[r] ?? 0) & ~(held[r] ?? 0)) !== 0);
}

export function hasPermission(perms: Permissions, resource: PermissionResource, bit: PermissionBit): boolean {
  return ((perms[resource] ?? 0) & PERM[bit]) !== 0;
}

/** The permission bit an HTTP method needs. */
export function bitForMethod(method: string): PermissionBit {
  switch (method.toLowerCase()) {
    case "get":
    case "head":
      return "get";
    case "post":
      return "post";
    case "put":
    case "patch":
      return "put";
    case "delete":
      return "del";
    default:
      throw new Error(`no permission bit for method ${method}`);
  }
}
