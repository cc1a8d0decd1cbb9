/**
 * The organization setting "members need two-factor sign-in". Enforced for
 * user sessions on every organization-scoped route (auth/authorize.ts); the
 * user's own 2FA routes stay open so they can enrol. Access tokens are
 * credentials of their own and are not affected: an owner revokes those.
 */
import type { OrganizationSecurity } from "@tern/protocol";
import type { Db } from "../../db/schema.ts";
import { ApiError } from "../../http/errors.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";

export const ENROL_HINT = "enrol with POST /api/users/me/mfa/enrol and confirm with POST /api/users/me/mfa/confirm";

export async function hasMfa(db: Db, userId: string): Promise<boolean> {
  const row = await db.selectFrom("user_mfa").select("enabled_at").where("user_id", "=", userId).executeTakeFirst();
  return row?.enabled_at != null;
}

/** Throws MFA_REQUIRED when the organization requires 2FA and the user has none. */
export async function assertMfaPolicy(db: Db, userId: string, orgId: string): Promise<void> {
  const row = await db
    .selectFrom("organizations as o")
    .leftJoin("user_mfa as m", (join) => join.on("m.user_id", "=", userId))
    .select(["o.require_mfa", "m.enabled_at"])
    .where("o.id", "=", orgId)
    .executeTakeFirst();
  if (row?.require_mfa && !row.enabled_at) {
    throw new ApiError("MFA_REQUIRED", `this organization requires two-factor sign-in: ${ENROL_HINT}`);
  }
}

export async function getOrgSecurity(ctx: ServiceCtx): Promise<OrganizationSecurity> {
  const row = await ctx.db
    .selectFrom("organizations")
    .select("require_mfa")
    .where("id", "=", ctx.org.id)
    .executeTakeFirstOrThrow();
  return { requireMfa: row.require_mfa };
}

/** Turning the requirement on needs the caller (a key: its creator) to have 2FA, so nobody locks themself out by accident. */
export async function updateOrgSecurity(ctx: ServiceCtx, input: OrganizationSecurity): Promise<OrganizationSecurity> {
  return inTransaction(ctx, async (tx) => {
    const before = await tx.db
      .selectFrom("organizations")
      .select("require_mfa")
      .where("id", "=", tx.org.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (input.requireMfa && !before.require_mfa && !(tx.actor.userId && (await hasMfa(tx.db, tx.actor.userId)))) {
      throw new ApiError("MFA_REQUIRED", `enable your own two-factor sign-in before requiring it: ${ENROL_HINT}`);
    }
    await tx.db.updateTable("organizations").set({ require_mfa: input.requireMfa }).where("id", "=", tx.org.id).execute();
    await recordAudit(tx, {
      action: "update-security",
      resource: "organizations",
      resourceId: tx.org.id,
      before: { requireMfa: before.require_mfa },
      after: { requireMfa: input.requireMfa },
    });
    return { requireMfa: input.requireMfa };
  });
}
