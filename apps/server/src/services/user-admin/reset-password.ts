/**
 * `tern-server admin reset-password`: sets a user's password directly in the
 * database (for an owner locked out, with no API to log in to), ends their
 * sessions and API keys, and records it in the audit log of their
 * organizations.
 */
import { hashPassword } from "../../auth/password.ts";
import type { Db } from "../../db/schema.ts";
import { revokeUserCredentials } from "../accounts/revoke-credentials.ts";
import { operatorLabel, recordOperatorAudit } from "./operator-audit.ts";

export interface RevokedAccess {
  sessions: number;
  /** The deleted API keys (each audited in its organization). */
  apiKeys: { id: string; name: string; organizationId: string }[];
}

export class UserNotFoundError extends Error {}

export interface ResetPasswordInput {
  email: string;
  password: string;
  passwordHashCost: number;
  keepApiKeys?: boolean;
}

export async function resetPassword(db: Db, input: ResetPasswordInput): Promise<{ userId: string } & RevokedAccess> {
  const passwordHash = await hashPassword(input.password, input.passwordHashCost);
  return db.transaction().execute(async (trx) => {
    const user = await trx
      .selectFrom("users")
      .select(["id", "default_org_id"])
      .where("email", "=", input.email)
      .forUpdate()
      .executeTakeFirst();
    if (!user) throw new UserNotFoundError(`no user with the e-mail ${input.email}`);
    await trx
      .updateTable("users")
      .set({ password_hash: passwordHash, updated_at: new Date() })
      .where("id", "=", user.id)
      .execute();
    const operator = { kind: "system" as const, label: operatorLabel(), userId: null, tokenId: null };
    const { sessions, deletedKeys } = await revokeUserCredentials(trx, user.id, operator, {
      keepApiKeys: input.keepApiKeys ?? false,
    });
    const revoked: RevokedAccess = { sessions, apiKeys: deletedKeys };

    // One entry in each account the user belongs to (directly or through an organization), so its owners see it.
    const accounts = await trx
      .selectFrom("memberships as m")
      .leftJoin("organizations as o", "o.id", "m.organization_id")
      .select((eb) => eb.fn.coalesce("m.account_id", "o.account_id").as("accountId"))
      .where("m.user_id", "=", user.id)
      .distinct()
      .execute();
    const after = { email: input.email, sessionsRevoked: revoked.sessions, apiKeysDeleted: revoked.apiKeys.map((k) => k.name) };
    const accountIds = accounts.map((a) => a.accountId).filter((id): id is string => id !== null);
    // The organization's audit list (GET /audit) shows entries of that organization: use the user's default one where it fits.
    const defaultOrg = user.default_org_id
      ? await trx
          .selectFrom("organizations")
          .select(["id", "account_id"])
          .where("id", "=", user.default_org_id)
          .executeTakeFirst()
      : undefined;
    for (const accountId of accountIds.length ? accountIds : [null])
      await recordOperatorAudit(trx, {
        action: "reset-password",
        resource: "users",
        resourceId: user.id,
        accountId,
        orgId: defaultOrg && defaultOrg.account_id === accountId ? defaultOrg.id : null,
        after,
      });
    return { userId: user.id, ...revoked };
  });
}
