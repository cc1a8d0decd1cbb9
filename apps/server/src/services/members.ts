/**
 * Members: users and their roles on the request's organization or on its
 * whole account. Account-wide memberships can only be managed by the
 * account's owners, and an account always keeps one owner. Members join by
 * accepting an invitation (services/accounts/invitations.ts).
 */
import { type Membership, type MembershipUpdate, ROLE_PERMISSIONS } from "@tern/protocol";
import { sql } from "kysely";
import type { z } from "zod";
import { hasPermission } from "../auth/permissions.ts";
import { conflict, forbidden, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";

interface MembershipJoined {
  id: string;
  role: Membership["role"];
  account_id: string | null;
  organization_id: string | null;
  created_at: Date;
  user_id: string;
  email: string;
  name: string;
}

export function toMembership(row: MembershipJoined): Membership {
  return {
    id: row.id,
    user: { id: row.user_id, email: row.email, name: row.name },
    scope: row.organization_id ? "organization" : "account",
    scopeId: (row.organization_id ?? row.account_id)!,
    role: row.role,
    createdAt: row.created_at.toISOString(),
  };
}

export const MEMBER_LIST: ListSpec = {
  fields: {
    id: { column: "m.id", type: "uuid" },
    role: { column: "m.role", type: "text" },
    // Derived, not stored: any SQL expression can stand behind a key.
    scope: { column: sql`case when m.organization_id is null then 'account' else 'organization' end`, type: "text" },
    "user.id": { column: "u.id", type: "uuid" },
    "user.email": { column: "u.email", type: "text" },
    "user.name": { column: "u.name", type: "text" },
    createdAt: { column: "m.created_at", type: "timestamp" },
  },
  defaultSort: { key: "createdAt", order: "asc" },
  tiebreaker: "m.id",
};

function membershipsQuery(ctx: ServiceCtx) {
  return ctx.db
    .selectFrom("memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["m.id", "m.role", "m.account_id", "m.organization_id", "m.created_at", "u.id as user_id", "u.email", "u.name"])
    .where((eb) => eb.or([eb("m.organization_id", "=", ctx.org.id), eb("m.account_id", "=", ctx.org.accountId)]));
}

/** Memberships that give access to the request's organization: on it, and on its account. */
export async function listMembers(ctx: ServiceCtx, query: ListQuery) {
  const { rows, total } = await runList(ctx.db, membershipsQuery(ctx), query, MEMBER_LIST);
  return { items: rows.map(toMembership), total };
}

/** Account-wide memberships are the account owners' business (members bit of their account role). */
export function assertMayManageScope(ctx: ServiceCtx, scope: "account" | "organization", bit: "post" | "put" | "del") {
  if (scope !== "account") return;
  const accountPerms = ctx.accountRole ? ROLE_PERMISSIONS[ctx.accountRole] : null;
  if (!accountPerms || !hasPermission(accountPerms, "members", bit)) {
    throw forbidden("only owners of the account can manage account-wide memberships");
  }
}

/** Refuses a change that would leave the account without an owner. */
async function assertOwnerRemains(ctx: ServiceCtx, membership: MembershipJoined) {
  if (membership.account_id === null || membership.role !== "owner") return;
  const owners = await ctx.db
    .selectFrom("memberships")
    .select("id")
    .where("account_id", "=", membership.account_id)
    .where("role", "=", "owner")
    .forUpdate()
    .execute();
  if (owners.length <= 1) throw conflict("an account must keep at least one owner");
}

export async function loadMembership(ctx: ServiceCtx, id: string): Promise<MembershipJoined> {
  const row = await membershipsQuery(ctx).where("m.id", "=", id).forUpdate(["m"]).executeTakeFirst();
  if (!row) throw notFound("membership");
  return row;
}

export async function updateMember(ctx: ServiceCtx, id: string, input: z.output<typeof MembershipUpdate>): Promise<Membership> {
  return inTransaction(ctx, async (tx) => {
    const row = await loadMembership(tx, id);
    assertMayManageScope(tx, row.account_id ? "account" : "organization", "put");
    if (input.role !== "owner") await assertOwnerRemains(tx, row);
    await tx.db.updateTable("memberships").set({ role: input.role }).where("id", "=", id).execute();
    const before = toMembership(row);
    const after = { ...before, role: input.role };
    await recordAudit(tx, { action: "update", resource: "members", resourceId: id, before, after });
    return after;
  });
}

export async function deleteMember(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await loadMembership(tx, id);
    assertMayManageScope(tx, row.account_id ? "account" : "organization", "del");
    await assertOwnerRemains(tx, row);
    await tx.db.deleteFrom("memberships").where("id", "=", id).execute();
    await recordAudit(tx, { action: "delete", resource: "members", resourceId: id, before: toMembership(row) });
  });
}
