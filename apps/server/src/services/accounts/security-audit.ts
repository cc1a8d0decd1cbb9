/**
 * Audit entries of a user's own security events (failed logins, password
 * changes and resets, own sessions revoked). A user is not inside one
 * organization, so the entry goes to the organization the user acts in by
 * default (their default, else their oldest), where its owners read it; a user
 * without any membership has no tenant log, and the event goes to the server
 * log only.
 */
import type { Actor } from "../../auth/access.ts";
import { defaultOrgOf } from "../../auth/resolve-access.ts";
import type { Db } from "../../db/schema.ts";
import { type AuditRecord, recordAudit } from "../audit.ts";

/** The user acting on their own account, as the audit log names them. */
export async function userActor(db: Db, userId: string): Promise<Actor> {
  const user = await db.selectFrom("users").select("email").where("id", "=", userId).executeTakeFirst();
  return { kind: "user", label: user?.email ?? userId, userId, tokenId: null };
}

/** Records `entry` about `userId` in the user's default organization; false when the user has none. */
export async function auditUserEvent(db: Db, userId: string, actor: Actor, entry: Omit<AuditRecord, "orgId">): Promise<boolean> {
  const orgId = await defaultOrgOf(db, userId);
  if (!orgId) return false;
  const org = await db
    .selectFrom("organizations")
    .select(["id", "account_id", "name"])
    .where("id", "=", orgId)
    .executeTakeFirst();
  if (!org) return false;
  const write = (tx: Db) => recordAudit({ db: tx, org: { id: org.id, accountId: org.account_id, name: org.name }, actor }, entry);
  if (db.isTransaction) await write(db);
  else await db.transaction().execute(write);
  return true;
}
