/** A wrong password for an existing user, in the audit log of the user's default organization (unknown names only in the server log). */
import type { Actor } from "../../auth/access.ts";
import type { Db } from "../../db/schema.ts";
import type { ClientInfo } from "../sessions.ts";
import { auditUserEvent } from "./security-audit.ts";

export async function auditFailedLogin(db: Db, userId: string, client: ClientInfo): Promise<void> {
  const actor: Actor = { kind: "system", label: `login:${client.ip}`, userId: null, tokenId: null };
  await auditUserEvent(db, userId, actor, {
    action: "login_failed",
    resource: "users",
    resourceId: userId,
    after: { ip: client.ip, userAgent: client.userAgent.slice(0, 300) },
  });
}
