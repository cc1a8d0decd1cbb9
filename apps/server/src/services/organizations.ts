/** Organizations: the tenant boundary. Everything else belongs to exactly one. */
import { randomUUID } from "node:crypto";
import type { Organization, OrganizationCreate, OrganizationUpdate } from "@tern/protocol";
import { sql } from "kysely";
import type { z } from "zod";
import { accessibleOrgsQuery } from "../auth/resolve-access.ts";
import type { OrganizationRow } from "../db/schema.ts";
import { conflict, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { assertOrganizationRoom } from "./accounts/plan-limits.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { applyAccountNotificationDefaults } from "./notifications/settings.ts";
import { assertTunnelRangeChangeAllowed, readdressTunnels } from "./tunnels/range.ts";

export function toOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    account: row.account_id,
    name: row.name,
    description: row.description,
    group: row.group_name,
    tunnelRange: row.tunnel_range,
    createdAt: row.created_at.toISOString(),
  };
}

export const ORGANIZATION_LIST: ListSpec = {
  fields: {
    id: { column: "o.id", type: "uuid" },
    name: { column: "o.name", type: "text" },
    description: { column: "o.description", type: "text" },
    group: { column: "o.group_name", type: "text" },
    account: { column: "o.account_id", type: "uuid" },
    tunnelRange: { column: "o.tunnel_range", type: "text" },
    createdAt: { column: "o.created_at", type: "timestamp" },
  },
  defaultSort: { key: "createdAt", order: "asc" },
  tiebreaker: "o.id",
};

/** The organizations the caller can act in (a key: only its own). */
export async function listOrganizations(ctx: ServiceCtx, query: ListQuery) {
  const base =
    ctx.actor.kind === "token"
      ? ctx.db.selectFrom("organizations as o").where("o.id", "=", ctx.org.id)
      : accessibleOrgsQuery(ctx.db, ctx.actor.userId!);
  const { rows, total } = await runList(ctx.db, base.selectAll("o"), query, ORGANIZATION_LIST);
  return { items: rows.map(toOrganization), total };
}

async function loadOrganization(ctx: ServiceCtx, id: string): Promise<OrganizationRow> {
  const row = await ctx.db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound("organization");
  return row;
}

/** The request's organization (routes resolve `{id}` to it before calling). */
export async function getOrganization(ctx: ServiceCtx): Promise<Organization> {
  return toOrganization(await loadOrganization(ctx, ctx.org.id));
}

function uniqueName<T>(promise: Promise<T>, name: string): Promise<T> {
  return promise.catch((err: { code?: string }) => {
    if (err?.code === "23505") throw conflict(`an organization named "${name}" already exists in this account`);
    throw err;
  });
}

/** Creates an organization in the caller's account. */
export async function createOrganization(ctx: ServiceCtx, input: z.output<typeof OrganizationCreate>): Promise<Organization> {
  return inTransaction(ctx, async (tx) => {
    await assertOrganizationRoom(tx.db, tx.org.accountId);
    const row = await uniqueName(
      tx.db
        .insertInto("organizations")
        .values({
          id: randomUUID(),
          account_id: tx.org.accountId,
          name: input.name,
          description: input.description,
          group_name: input.group,
          tunnel_range: input.tunnelRange,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
      input.name,
    );
    const org = toOrganization(row);
    // The account's default notification configuration applies to organizations created after it was set.
    await applyAccountNotificationDefaults(tx.db, org.id, row.account_id);
    await recordAudit(tx, { action: "create", resource: "organizations", resourceId: org.id, after: org, orgId: org.id });
    return org;
  });
}

/**
 * Changes the request's organization. A new tunnel range is checked against the
 * org's data first; then every device with a tunnel is recompiled (its
 * loopbacks move to the new range), which queues `organization` jobs whose ids
 * come back in `jobIds`.
 */
export async function updateOrganization(
  ctx: ServiceCtx,
  input: z.output<typeof OrganizationUpdate>,
): Promise<Organization & { jobIds: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const before = toOrganization(
      await tx.db.selectFrom("organizations").selectAll().where("id", "=", tx.org.id).forUpdate().executeTakeFirstOrThrow(),
    );
    if (input.tunnelRange !== undefined && input.tunnelRange !== before.tunnelRange) {
      await assertTunnelRangeChangeAllowed(tx, tx.org.id, input.tunnelRange, before.tunnelRange);
    }
    const name = input.name ?? before.name;
    const row = await uniqueName(
      tx.db
        .updateTable("organizations")
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.group !== undefined ? { group_name: input.group } : {}),
          ...(input.tunnelRange !== undefined ? { tunnel_range: input.tunnelRange } : {}),
          updated_at: sql`now()`,
        })
        .where("id", "=", tx.org.id)
        .returningAll()
        .executeTakeFirstOrThrow(),
      name,
    );
    const after = toOrganization(row);
    await recordAudit(tx, { action: "update", resource: "organizations", resourceId: after.id, before, after });
    const rangeChanged = after.tunnelRange !== before.tunnelRange;
    const { jobIds } = rangeChanged ? await readdressTunnels(tx, before.tunnelRange, after.tunnelRange) : { jobIds: [] };
    return { ...after, jobIds };
  });
}

/** Deletes the request's organization and everything in it; the last organization of an account stays. */
export async function deleteOrganization(ctx: ServiceCtx): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    // Lock the account's organizations so two deletions cannot both see "another one is left".
    const siblings = await tx.db
      .selectFrom("organizations")
      .select("id")
      .where("account_id", "=", tx.org.accountId)
      .forUpdate()
      .execute();
    const before = toOrganization(await loadOrganization(tx, tx.org.id));
    if (siblings.length <= 1) throw conflict("the last organization of an account cannot be deleted");
    await tx.db.deleteFrom("organizations").where("id", "=", tx.org.id).execute();
    await recordAudit(tx, { action: "delete", resource: "organizations", resourceId: before.id, before });
  });
}
