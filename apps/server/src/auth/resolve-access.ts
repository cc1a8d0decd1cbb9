/**
 * Principal + the organization a request names → Access. A user's role in an
 * organization is the stronger of their membership on it and on its account;
 * a key acts only in its own organization, with its masks cut down to what
 * its creator may do there today.
 */
import { ROLE_PERMISSIONS, type Role } from "@tern/protocol";
import type { Db } from "../db/schema.ts";
import { type Access, actorOf, type OrgRef, type Principal } from "./access.ts";
import { intersectPermissions, NO_PERMISSIONS, strongerRole } from "./permissions.ts";

export interface OrgRoles {
  org: OrgRef;
  orgRole: Role | null;
  accountRole: Role | null;
}

/** The user's roles on one organization and its account (one query); null when the organization does not exist. */
export async function userRolesInOrg(db: Db, userId: string, orgId: string): Promise<OrgRoles | null> {
  const rows = await db
    .selectFrom("organizations as o")
    .leftJoin("memberships as m", (join) =>
      join
        .on("m.user_id", "=", userId)
        .on((eb) => eb.or([eb("m.organization_id", "=", eb.ref("o.id")), eb("m.account_id", "=", eb.ref("o.account_id"))])),
    )
    .select(["o.id", "o.account_id as accountId", "o.name", "m.role", "m.organization_id as membershipOrg"])
    .where("o.id", "=", orgId)
    .execute();
  const first = rows[0];
  if (!first) return null;
  const org = { id: first.id, accountId: first.accountId, name: first.name };
  const orgRole = rows.find((r) => r.role && r.membershipOrg !== null)?.role ?? null;
  const accountRole = rows.find((r) => r.role && r.membershipOrg === null)?.role ?? null;
  return { org, orgRole, accountRole };
}

/** Every organization the user can act in, oldest first. */
export function accessibleOrgsQuery(db: Db, userId: string) {
  return db.selectFrom("organizations as o").where((eb) =>
    eb.exists(
      eb
        .selectFrom("memberships as m")
        .select("m.id")
        .where("m.user_id", "=", userId)
        .where((m) => m.or([m("m.organization_id", "=", m.ref("o.id")), m("m.account_id", "=", m.ref("o.account_id"))])),
    ),
  );
}

/** The organization a user acts in when the request names none: their default if still theirs, else the oldest. */
export async function defaultOrgOf(db: Db, userId: string): Promise<string | null> {
  const user = await db.selectFrom("users").select("default_org_id").where("id", "=", userId).executeTakeFirst();
  const orgs = await accessibleOrgsQuery(db, userId)
    .select("o.id")
    .orderBy((eb) => eb(eb.ref("o.id"), "=", user?.default_org_id ?? null), "desc")
    .orderBy("o.created_at")
    .orderBy("o.id")
    .limit(1)
    .execute();
  return orgs[0]?.id ?? null;
}

/** Access of `principal` in `orgId`; null when the principal may not see that organization at all. */
export async function resolveAccess(db: Db, principal: Principal, orgId: string): Promise<Access | null> {
  if (principal.kind === "user") {
    const roles = await userRolesInOrg(db, principal.userId, orgId);
    const role = strongerRole(roles?.orgRole ?? null, roles?.accountRole ?? null);
    if (!roles || !role) return null;
    return {
      principal,
      actor: actorOf(principal),
      org: roles.org,
      role,
      permissions: ROLE_PERMISSIONS[role],
      accountRole: roles.accountRole,
    };
  }
  if (principal.orgId !== orgId) return null;
  const creator = await userRolesInOrg(db, principal.creatorUserId, orgId);
  if (!creator) return null;
  const creatorRole = strongerRole(creator.orgRole, creator.accountRole);
  const ceiling = creatorRole ? ROLE_PERMISSIONS[creatorRole] : NO_PERMISSIONS;
  return {
    principal,
    actor: actorOf(principal),
    org: creator.org,
    role: principal.role,
    permissions: intersectPermissions(principal.masks, ceiling),
    accountRole: null,
  };
}
