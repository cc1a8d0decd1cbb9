/**
 * Multi-link policies: ordered rules that send matching traffic over paths
 * chosen by path label, by priority or by measured link quality. A device runs
 * at most one (its `policies.multilink`, column `devices.mlpolicy_id`); changing
 * an installed policy recompiles every device that runs it.
 * Installing on many devices at once is mlpolicy-install.ts.
 */
import { randomUUID } from "node:crypto";
import type { ErrorDetail, MlPolicy, MlPolicyCreate } from "@tern/protocol";
import { sql } from "kysely";
import type { z } from "zod";
import { toJson } from "../db/json.ts";
import type { MlPolicyRow } from "../db/schema.ts";
import { conflict, notFound, validationFailed } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { anyUuid, queueConfigJobs } from "./desired-config.ts";

type PolicyInput = z.output<typeof MlPolicyCreate>;

const INSTALLED_ON = sql<number>`(select count(*)::int from devices d where d.mlpolicy_id = p.id)`;

export function toMlPolicy(row: MlPolicyRow & { installed_on: number }): MlPolicy {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    description: row.description,
    rules: row.rules,
    installedOn: row.installed_on,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const MLPOLICY_LIST: ListSpec = {
  fields: {
    id: { column: "p.id", type: "uuid" },
    name: { column: "p.name", type: "text" },
    description: { column: "p.description", type: "text" },
    installedOn: { column: INSTALLED_ON, type: "number" },
    createdAt: { column: "p.created_at", type: "timestamp" },
    updatedAt: { column: "p.updated_at", type: "timestamp" },
  },
  defaultSort: { key: "name", order: "asc" },
  tiebreaker: "p.id",
};

const selectPolicies = (ctx: ServiceCtx) =>
  ctx.db
    .selectFrom("mlpolicies as p")
    .selectAll("p")
    .select(INSTALLED_ON.as("installed_on"))
    .where("p.organization_id", "=", ctx.org.id);

export async function listMlPolicies(ctx: ServiceCtx, query: ListQuery) {
  const { rows, total } = await runList(ctx.db, selectPolicies(ctx), query, MLPOLICY_LIST);
  return { items: rows.map(toMlPolicy), total };
}

/** The policy, locked when changing it so installs and deletes of the same policy take turns. */
export async function loadMlPolicy(ctx: ServiceCtx, id: string, lock = false) {
  if (lock)
    await ctx.db
      .selectFrom("mlpolicies")
      .select("id")
      .where("organization_id", "=", ctx.org.id)
      .where("id", "=", id)
      .forUpdate()
      .execute();
  const row = await selectPolicies(ctx).where("p.id", "=", id).executeTakeFirst();
  if (!row) throw notFound("multi-link policy");
  return row;
}

export async function getMlPolicy(ctx: ServiceCtx, id: string): Promise<MlPolicy> {
  return toMlPolicy(await loadMlPolicy(ctx, id));
}

/** What the protocol schema cannot know: path labels of this organization, one rule name each, thresholds only where used. */
async function checkPolicy(ctx: ServiceCtx, input: PolicyInput): Promise<void> {
  const labelIds = [...new Set(input.rules.flatMap((r) => r.action.pathlabels))];
  const existing = new Set(
    labelIds.length
      ? (
          await ctx.db
            .selectFrom("path_labels")
            .select("id")
            .where("organization_id", "=", ctx.org.id)
            .where("id", "=", anyUuid(labelIds))
            .execute()
        ).map((r) => r.id)
      : [],
  );
  const peerIds = [...new Set(input.rules.flatMap((r) => (r.action.peer ? [r.action.peer] : [])))];
  const peers = new Set(
    peerIds.length
      ? (
          await ctx.db
            .selectFrom("peers")
            .select("id")
            .where("organization_id", "=", ctx.org.id)
            .where("id", "=", anyUuid(peerIds))
            .execute()
        ).map((r) => r.id)
      : [],
  );
  const details: ErrorDetail[] = [];
  const names = new Set<string>();
  input.rules.forEach((rule, i) => {
    const at = `rules.${i}`;
    if (names.has(rule.name)) details.push({ path: `${at}.name`, message: `rule name ${rule.name} is used twice` });
    names.add(rule.name);
    const seen = new Set<string>();
    rule.action.pathlabels.forEach((id, j) => {
      if (!existing.has(id))
        details.push({ path: `${at}.action.pathlabels.${j}`, message: `path label ${id} does not exist in the organization` });
      if (seen.has(id)) details.push({ path: `${at}.action.pathlabels.${j}`, message: `path label ${id} is listed twice` });
      seen.add(id);
    });
    if (rule.action.peer !== undefined && !peers.has(rule.action.peer))
      details.push({ path: `${at}.action.peer`, message: `peer ${rule.action.peer} does not exist in the organization` });
    if (rule.action.order !== "link-quality" && rule.action.linkQuality !== undefined)
      details.push({
        path: `${at}.action.linkQuality`,
        message: "linkQuality thresholds apply only to rules with order link-quality",
      });
  });
  if (details.length) throw validationFailed(details[0]!.message, details);
}

function uniqueName<T>(promise: Promise<T>, name: string): Promise<T> {
  return promise.catch((err: { code?: string }) => {
    if (err?.code === "23505")
      throw conflict(`a multi-link policy named "${name}" already exists`, [
        { path: "name", message: "must be unique in the organization" },
      ]);
    throw err;
  });
}

export async function createMlPolicy(ctx: ServiceCtx, input: PolicyInput): Promise<MlPolicy> {
  return inTransaction(ctx, async (tx) => {
    await checkPolicy(tx, input);
    const id = randomUUID();
    await uniqueName(
      tx.db
        .insertInto("mlpolicies")
        .values({ id, organization_id: tx.org.id, name: input.name, description: input.description, rules: toJson(input.rules) })
        .execute(),
      input.name,
    );
    const policy = toMlPolicy(await loadMlPolicy(tx, id));
    await recordAudit(tx, { action: "create", resource: "mlpolicies", resourceId: id, after: policy });
    return policy;
  });
}

/** Replaces a policy; every device running it is recompiled (an `mlpolicy` job each). */
export async function updateMlPolicy(ctx: ServiceCtx, id: string, input: PolicyInput): Promise<MlPolicy & { jobIds: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const before = toMlPolicy(await loadMlPolicy(tx, id, true));
    await checkPolicy(tx, input);
    await uniqueName(
      tx.db
        .updateTable("mlpolicies")
        .set({ name: input.name, description: input.description, rules: toJson(input.rules), updated_at: sql`now()` })
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", id)
        .execute(),
      input.name,
    );
    const after = toMlPolicy(await loadMlPolicy(tx, id));
    await recordAudit(tx, { action: "update", resource: "mlpolicies", resourceId: id, before, after });
    const devices = await tx.db
      .selectFrom("devices")
      .select("id")
      .where("organization_id", "=", tx.org.id)
      .where("mlpolicy_id", "=", id)
      .execute();
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: devices.map((d) => d.id),
      type: "mlpolicy",
      tasks: [{ kind: "mlpolicy-update", summary: `multi-link policy ${after.name} changed` }],
    });
    return { ...after, jobIds };
  });
}

const MAX_NAMED = 10;

/** Deletes a policy that no device runs; an installed one is a CONFLICT naming its devices. */
export async function deleteMlPolicy(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const before = toMlPolicy(await loadMlPolicy(tx, id, true));
    if (before.installedOn > 0) {
      const devices = await tx.db
        .selectFrom("devices")
        .select("name")
        .where("organization_id", "=", tx.org.id)
        .where("mlpolicy_id", "=", id)
        .orderBy("name")
        .limit(MAX_NAMED)
        .execute();
      throw conflict(
        `multi-link policy ${before.name} is installed on ${before.installedOn} device${before.installedOn > 1 ? "s" : ""}; uninstall it first (POST /api/mlpolicies/${id}/uninstall)`,
        devices.map((d) => ({ path: "installedOn", message: `installed on device ${d.name}` })),
      );
    }
    await tx.db.deleteFrom("mlpolicies").where("organization_id", "=", tx.org.id).where("id", "=", id).execute();
    await recordAudit(tx, { action: "delete", resource: "mlpolicies", resourceId: id, before });
  });
}
