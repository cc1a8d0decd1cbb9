/**
 * Path labels: names for kinds of path (an ISP, "MPLS", "LTE backup") that WAN
 * interfaces and tunnels carry and multi-link policies prefer in order.
 *
 * Deleting a label that is in use is refused with CONFLICT naming its users
 * (interfaces, tunnels, policies), so a policy never silently loses a path.
 * With `force=true` the label is removed from every user instead (policy rules
 * left without a label are removed) and the affected devices are recompiled.
 */
import { randomUUID } from "node:crypto";
import type { ErrorDetail, PathLabel, PathLabelCreate, PolicyRule } from "@tern/protocol";
import { sql } from "kysely";
import type { z } from "zod";
import { toJson } from "../db/json.ts";
import type { PathLabelRow } from "../db/schema.ts";
import { conflict, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { queueConfigJobs } from "./desired-config.ts";

export function toPathLabel(row: PathLabelRow): PathLabel {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    description: row.description,
    color: row.color,
    type: row.type,
    createdAt: row.created_at.toISOString(),
  };
}

export const PATH_LABEL_LIST: ListSpec = {
  fields: {
    id: { column: "id", type: "uuid" },
    name: { column: "name", type: "text" },
    description: { column: "description", type: "text" },
    color: { column: "color", type: "text" },
    type: { column: "type", type: "text" },
    createdAt: { column: "created_at", type: "timestamp" },
  },
  defaultSort: { key: "name", order: "asc" },
  tiebreaker: "id",
};

export async function listPathLabels(ctx: ServiceCtx, query: ListQuery) {
  const base = ctx.db.selectFrom("path_labels").selectAll().where("organization_id", "=", ctx.org.id);
  const { rows, total } = await runList(ctx.db, base, query, PATH_LABEL_LIST);
  return { items: rows.map(toPathLabel), total };
}

async function loadPathLabel(ctx: ServiceCtx, id: string, lock = false): Promise<PathLabelRow> {
  let query = ctx.db.selectFrom("path_labels").selectAll().where("organization_id", "=", ctx.org.id).where("id", "=", id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("path label");
  return row;
}

export async function getPathLabel(ctx: ServiceCtx, id: string): Promise<PathLabel> {
  return toPathLabel(await loadPathLabel(ctx, id));
}

function uniqueName<T>(promise: Promise<T>, name: string): Promise<T> {
  return promise.catch((err: { code?: string }) => {
    if (err?.code === "23505")
      throw conflict(`a path label named "${name}" already exists`, [
        { path: "name", message: "must be unique in the organization" },
      ]);
    throw err;
  });
}

export async function createPathLabel(ctx: ServiceCtx, input: z.output<typeof PathLabelCreate>): Promise<PathLabel> {
  return inTransaction(ctx, async (tx) => {
    const row = await uniqueName(
      tx.db
        .insertInto("path_labels")
        .values({ id: randomUUID(), organization_id: tx.org.id, ...input })
        .returningAll()
        .executeTakeFirstOrThrow(),
      input.name,
    );
    const label = toPathLabel(row);
    await recordAudit(tx, { action: "create", resource: "pathlabels", resourceId: label.id, after: label });
    return label;
  });
}

/** Renames or recolours a label. Devices refer to labels by id, so no device config changes. */
export async function updatePathLabel(ctx: ServiceCtx, id: string, input: z.output<typeof PathLabelCreate>): Promise<PathLabel> {
  return inTransaction(ctx, async (tx) => {
    const before = toPathLabel(await loadPathLabel(tx, id, true));
    const row = await uniqueName(
      tx.db
        .updateTable("path_labels")
        .set(input)
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow(),
      input.name,
    );
    const after = toPathLabel(row);
    await recordAudit(tx, { action: "update", resource: "pathlabels", resourceId: id, before, after });
    return after;
  });
}

/** jsonb patterns that find a label among interfaces and policy rules (served by containment, `@>`). */
const interfacePattern = (id: string) => toJson([{ pathlabels: [id] }]);
const rulePattern = (id: string) => toJson([{ action: { pathlabels: [id] } }]);

/** Who uses a label: interfaces of devices, tunnels, multi-link policies. */
async function pathLabelUsers(ctx: ServiceCtx, id: string) {
  const devices = await ctx.db
    .selectFrom("devices")
    .select(["id", "name", "interfaces"])
    .where("organization_id", "=", ctx.org.id)
    .where(sql<boolean>`interfaces @> ${interfacePattern(id)}::jsonb`)
    .orderBy("name")
    .execute();
  const tunnels = await ctx.db
    .selectFrom("tunnels")
    .select(["id", "num", "device_a", "device_b"])
    .where("organization_id", "=", ctx.org.id)
    .where("pathlabel_id", "=", id)
    .orderBy("num")
    .execute();
  const policies = await ctx.db
    .selectFrom("mlpolicies")
    .select(["id", "name", "rules"])
    .where("organization_id", "=", ctx.org.id)
    .where(sql<boolean>`rules @> ${rulePattern(id)}::jsonb`)
    .orderBy("name")
    .execute();
  return { devices, tunnels, policies };
}

const MAX_NAMED = 20;

/**
 * Deletes a label. In use and without `force`: CONFLICT naming the users.
 * With `force`: strips it from interfaces, tunnels and policies and recompiles
 * the devices concerned; answers the queued job ids (none when unused).
 */
export async function deletePathLabel(ctx: ServiceCtx, id: string, force: boolean): Promise<{ jobIds: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const before = toPathLabel(await loadPathLabel(tx, id, true));
    const users = await pathLabelUsers(tx, id);
    const details: ErrorDetail[] = [
      ...users.devices.flatMap((d) =>
        d.interfaces
          .filter((i) => i.pathlabels.includes(id))
          .map((i) => ({ path: "interfaces", message: `interface ${i.name} of device ${d.name}` })),
      ),
      ...users.tunnels.map((t) => ({ path: "tunnels", message: `tunnel ${t.num}` })),
      ...users.policies.map((p) => ({ path: "mlpolicies", message: `multi-link policy ${p.name}` })),
    ];
    if (details.length && !force) {
      const shown = details.slice(0, MAX_NAMED);
      if (details.length > MAX_NAMED) shown.push({ path: "", message: `and ${details.length - MAX_NAMED} more` });
      throw conflict(
        `path label ${before.name} is in use (${details.length} user${details.length > 1 ? "s" : ""}); remove it from them first or delete with force=true`,
        shown,
      );
    }

    const affected = new Set<string>();
    if (users.devices.length) {
      const rows = await sql<{ id: string }>`
        update devices set updated_at = now(), interfaces = (
          select jsonb_agg(case when e.i ? 'pathlabels' then jsonb_set(e.i, '{pathlabels}', (e.i->'pathlabels') - ${id}::text) else e.i end order by e.n)
          from jsonb_array_elements(devices.interfaces) with ordinality as e(i, n))
        where organization_id = ${tx.org.id} and interfaces @> ${interfacePattern(id)}::jsonb
        returning id`.execute(tx.db);
      for (const r of rows.rows) affected.add(r.id);
    }
    if (users.tunnels.length) {
      const rows = await tx.db
        .updateTable("tunnels")
        .set({ pathlabel_id: null, updated_at: sql`now()` })
        .where("organization_id", "=", tx.org.id)
        .where("pathlabel_id", "=", id)
        .returning(["device_a", "device_b"])
        .execute();
      for (const r of rows) for (const d of [r.device_a, r.device_b]) if (d) affected.add(d);
    }
    for (const policy of users.policies) {
      const rules: PolicyRule[] = policy.rules
        .map((r) => ({ ...r, action: { ...r.action, pathlabels: r.action.pathlabels.filter((l) => l !== id) } }))
        // A rule with a peer action (cloud security) never needed a label.
        .filter((r) => r.action.peer !== undefined || r.action.pathlabels.length > 0);
      await tx.db
        .updateTable("mlpolicies")
        .set({ rules: toJson(rules), updated_at: sql`now()` })
        .where("id", "=", policy.id)
        .execute();
      const installed = await tx.db.selectFrom("devices").select("id").where("mlpolicy_id", "=", policy.id).execute();
      for (const d of installed) affected.add(d.id);
    }

    await tx.db.deleteFrom("path_labels").where("organization_id", "=", tx.org.id).where("id", "=", id).execute();
    await recordAudit(tx, {
      action: "delete",
      resource: "pathlabels",
      resourceId: id,
      before: { ...before, removedFrom: details.map((d) => d.message) },
    });
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: [...affected],
      type: "modify",
      tasks: [{ kind: "pathlabel-removed", summary: `path label ${before.name} deleted` }],
    });
    return { jobIds };
  });
}
