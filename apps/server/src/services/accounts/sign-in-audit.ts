/** Sign-in events in the audit log of the user's default organization (security-audit.ts). */
import type { Actor } from "../../auth/access.ts";
import type { Db } from "../../db/schema.ts";
import type { ClientInfo } from "../sessions.ts";
import { auditUserEvent, userActor } from "./security-audit.ts";

/** A wrong password for an existing user (unknown names have no tenant log). */
export async function auditFailedLogin(db: Db, userId: string, client: ClientInfo): Promise<void> {
  const actor: Actor = { kind: "system", label: `login:${client.ip}`, userId: null, tokenId: null };
  await auditUserEvent(db, userId, actor, {
    action: "login_failed",
    resource: "users",
    resourceId: userId,
    after: { ip: client.ip, userAgent: client.userAgent.slice(0, 300) },
  });
}

/** A session ended by its own refresh token (POST /users/logout). */
export async function auditLogout(db: Db, userId: string, sessionId: string): Promise<void> {
  await auditUserEvent(db, userId, await userActor(db, userId), {
    action: "logout",
    resource: "sessions",
    resourceId: sessionId,
  });
}
