/**
 * Account-security events of a user (2FA changes, SSO sign-ins) in the audit
 * log of every organization the user can act in, so each organization's
 * owners see what happened to their members' sign-in.
 */
import type { Actor } from "../../auth/access.ts";
import { accessibleOrgsQuery } from "../../auth/resolve-access.ts";
import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { recordAudit } from "../audit.ts";
import { systemCtx } from "../context.ts";

export interface AuditedUser {
  id: string;
  email: string;
}

export function userActor(user: AuditedUser): Actor {
  return { kind: "user", label: user.email, userId: user.id, tokenId: null };
}

/** Must run inside the transaction of the change (`tx`). */
export async function auditUserEvent(
  deps: Pick<AppDeps, "config" | "keyring" | "logger">,
  tx: Db,
  user: AuditedUser,
  action: string,
  after: Record<string, unknown> = {},
): Promise<void> {
  const orgs = await accessibleOrgsQuery(tx, user.id).select(["o.id", "o.account_id as accountId", "o.name"]).execute();
  for (const org of orgs) {
    // systemCtx reads only config, keyring and logger from deps besides db, which is the transaction here.
    const ctx = { ...systemCtx({ ...deps, db: tx } as AppDeps, org, userActor(user)), db: tx };
    await recordAudit(ctx, { action, resource: "users", resourceId: user.id, after: { email: user.email, ...after } });
  }
}
