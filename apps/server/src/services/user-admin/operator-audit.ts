/**
 * Audit entries of what an operator did on the server's own machine (the
 * `tern-server admin` commands), outside any API request: the actor is
 * `operator:<OS user>`, so the log tells them apart from API users.
 */
import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { toJsonOrNull } from "../../db/json.ts";
import type { Db } from "../../db/schema.ts";

export function operatorLabel(): string {
  let name = "unknown";
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry for this uid (containers): the label says so.
  }
  return `operator:${name}`;
}

export interface OperatorAudit {
  action: string;
  resource: string;
  resourceId: string | null;
  accountId: string | null;
  orgId: string | null;
  after?: unknown;
}

/** Writes one entry; call it inside the transaction of the change. */
export async function recordOperatorAudit(db: Db, entry: OperatorAudit): Promise<void> {
  await db
    .insertInto("audit_log")
    .values({
      id: randomUUID(),
      account_id: entry.accountId,
      organization_id: entry.orgId,
      actor: operatorLabel(),
      actor_user_id: null,
      actor_token_id: null,
      action: entry.action,
      resource: entry.resource,
      resource_id: entry.resourceId,
      before: null,
      after: toJsonOrNull(entry.after),
    })
    .execute();
}
