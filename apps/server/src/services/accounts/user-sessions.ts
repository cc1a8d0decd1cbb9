/**
 * Login sessions as their users and owners see them: a user lists and revokes
 * their own; an owner (whoever may remove the member: the members `del` bit,
 * and an account owner for account-wide members) lists and revokes the
 * sessions of a member of the organization. Revoking a session ends its
 * refresh token and the access JWTs issued for it at once.
 */
import type { Session } from "@tern/protocol";
import { sql } from "kysely";
import type { UserPrincipal } from "../../auth/access.ts";
import type { Db, SessionRow } from "../../db/schema.ts";
import { notFound } from "../../http/errors.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { assertMayManageScope, loadMembership } from "../members.ts";
import { auditUserEvent, userActor } from "./security-audit.ts";

const COLUMNS = ["id", "ip", "user_agent", "created_at", "last_used_at", "expires_at"] as const;

function toSession(row: Pick<SessionRow, (typeof COLUMNS)[number]>, currentId: string | null): Session {
  return {
    id: row.id,
    ip: row.ip,
    userAgent: row.user_agent,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    current: row.id === currentId,
  };
}

function activeSessions(db: Db, userId: string) {
  return db
    .selectFrom("sessions")
    .select(COLUMNS)
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", new Date())
    .orderBy("created_at", "desc")
    .orderBy("id");
}

async function revoke(db: Db, userId: string, sessionId: string) {
  return db
    .updateTable("sessions")
    .set({ revoked_at: sql`now()` })
    .where("id", "=", sessionId)
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", new Date())
    .returning(COLUMNS)
    .executeTakeFirst();
}

export async function listOwnSessions(db: Db, user: UserPrincipal): Promise<Session[]> {
  return (await activeSessions(db, user.userId).execute()).map((r) => toSession(r, user.sessionId));
}

/** Revokes one of the caller's own sessions (the current one too: that is a logout). */
export async function revokeOwnSession(db: Db, user: UserPrincipal, sessionId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await revoke(trx, user.userId, sessionId);
    if (!row) throw notFound("session");
    await auditUserEvent(trx, user.userId, await userActor(trx, user.userId), {
      action: "revoke",
      resource: "sessions",
      resourceId: sessionId,
      before: toSession(row, null),
    });
  });
}

/** The active sessions of the member behind membership `membershipId` of the request's organization. */
export async function listMemberSessions(ctx: ServiceCtx, membershipId: string): Promise<Session[]> {
  return inTransaction(ctx, async (tx) => {
    const member = await loadMembership(tx, membershipId);
    assertMayManageScope(tx, member.account_id ? "account" : "organization", "del");
    // `current` is about the caller's own request, which this view is not.
    return (await activeSessions(tx.db, member.user_id).execute()).map((r) => toSession(r, null));
  });
}

export async function revokeMemberSession(ctx: ServiceCtx, membershipId: string, sessionId: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const member = await loadMembership(tx, membershipId);
    assertMayManageScope(tx, member.account_id ? "account" : "organization", "del");
    const row = await revoke(tx.db, member.user_id, sessionId);
    if (!row) throw notFound("session");
    await recordAudit(tx, {
      action: "revoke",
      resource: "sessions",
      resourceId: sessionId,
      before: { ...toSession(row, null), user: { id: member.user_id, email: member.email } },
    });
  });
}
