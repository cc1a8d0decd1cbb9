/**
 * The audit log: who changed what in which organization, with the resource
 * before and after. Written in the same transaction as the change, so a change
 * without its entry (or an entry without its change) cannot exist.
 */
import { randomUUID } from "node:crypto";
import type { AuditEntry } from "@tern/protocol";
import { toJsonOrNull } from "../db/json.ts";
import type { AuditLogRow } from "../db/schema.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import type { ServiceCtx } from "./context.ts";

export interface AuditRecord {
  /** `create`, `update`, `delete` or a verb of the resource (`login`, `revoke` …). */
  action: string;
  /** The permission resource name (`organizations`, `accesstokens` …). */
  resource: string;
  resourceId: string | null;
  before?: unknown;
  after?: unknown;
  /** Defaults to the context's organization; null for account-wide changes. */
  orgId?: string | null;
}

/** Keys whose values never enter the log, at any depth. */
const SECRET_KEYS = /^(password|passwordHash|password_hash|token|tokenHash|token_hash|psk|secret|refreshToken)$/i;

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEYS.test(k) ? "[redacted]" : redact(v)]),
    );
  }
  return value;
}

/** What writing an entry needs of the context: the transaction, the organization and who acts. */
export type AuditCtx = Pick<ServiceCtx, "db" | "org" | "actor">;

/** Records one change; must run inside the transaction that makes the change. */
export function recordAudit(ctx: AuditCtx, entry: AuditRecord): Promise<void> {
  return recordAuditMany(ctx, [entry]);
}

/**
 * Records many changes in a few statements (bulk creates and deletes of
 * hundreds of resources); same rules as recordAudit.
 */
export async function recordAuditMany(ctx: AuditCtx, entries: readonly AuditRecord[]): Promise<void> {
  if (!ctx.db.isTransaction) throw new Error("recordAudit must run inside the transaction of the change (inTransaction)");
  const rows = entries.map((entry) => ({
    id: randomUUID(),
    account_id: ctx.org.accountId,
    organization_id: entry.orgId === undefined ? ctx.org.id : entry.orgId,
    actor: ctx.actor.label,
    actor_user_id: ctx.actor.userId,
    actor_token_id: ctx.actor.tokenId,
    action: entry.action,
    resource: entry.resource,
    resource_id: entry.resourceId,
    before: toJsonOrNull(redact(entry.before)),
    after: toJsonOrNull(redact(entry.after)),
  }));
  for (let i = 0; i < rows.length; i += 500)
    await ctx.db
      .insertInto("audit_log")
      .values(rows.slice(i, i + 500))
      .execute();
}

export function auditEntryFromRow(row: AuditLogRow): AuditEntry {
  return {
    id: row.id,
    org: row.organization_id,
    actor: row.actor,
    action: row.action,
    resource: row.resource,
    resourceId: row.resource_id,
    before: row.before ?? null,
    after: row.after ?? null,
    at: row.at.toISOString(),
  };
}

export const AUDIT_LIST = {
  fields: {
    id: { column: "id", type: "uuid" },
    action: { column: "action", type: "text" },
    resource: { column: "resource", type: "text" },
    resourceId: { column: "resource_id", type: "text" },
    actor: { column: "actor", type: "text" },
    at: { column: "at", type: "timestamp" },
  },
  defaultSort: { key: "at", order: "desc" },
  tiebreaker: "id",
} satisfies ListSpec;

/** The audit entries of the request's organization, newest first by default. */
export async function listAudit(ctx: ServiceCtx, query: ListQuery) {
  const base = ctx.db.selectFrom("audit_log").selectAll().where("organization_id", "=", ctx.org.id);
  const { rows, total } = await runList(ctx.db, base, query, AUDIT_LIST);
  return { items: rows.map(auditEntryFromRow), total };
}
