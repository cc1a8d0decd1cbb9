/**
 * Healing actions: each one taken or suggested is a row of `healing_actions`
 * (what GET /api/healing/actions lists, filterable by device, tunnel, kind and
 * time) and an audit entry (action `healing:<kind>`, resource `healing`, the
 * figures before and after), written in one transaction.
 */
import { randomUUID } from "node:crypto";
import type { HealingAction, HealingFigures, HealingKind } from "@tern/protocol";
import type { Actor, OrgRef } from "../../auth/access.ts";
import { toJson, toJsonOrNull } from "../../db/json.ts";
import type { Db, HealingActionRow } from "../../db/schema.ts";
import { type ListQuery, type ListSpec, runList } from "../../http/list-query.ts";
import { recordAudit } from "../audit.ts";
import type { ServiceCtx } from "../context.ts";

export interface NewHealingAction {
  deviceId: string | null;
  tunnelId: string | null;
  kind: HealingKind;
  mode: "act" | "suggest";
  source: "agent" | "server";
  link: string;
  reason: string;
  before: HealingFigures;
  after: HealingFigures | null;
  /** The agent's id of the report (de-duplicates re-sent reports); null for the server's own. */
  agentRef?: string | null;
  /** Defaults to now. */
  at?: Date;
}

/**
 * Records one action and its audit entry in a transaction of `db`. An agent
 * report seen before only fills in its missing "after" figures; returns the
 * id, and whether it was new.
 */
export async function recordHealingAction(
  db: Db,
  org: OrgRef,
  actor: Actor,
  a: NewHealingAction,
): Promise<{ id: string; created: boolean }> {
  const write = async (trx: Db) => {
    if (a.agentRef && a.deviceId) {
      const seen = await trx
        .selectFrom("healing_actions")
        .select(["id", "after"])
        .where("device_id", "=", a.deviceId)
        .where("agent_ref", "=", a.agentRef)
        .executeTakeFirst();
      if (seen) {
        if (seen.after === null && a.after !== null) await completeHealingAction(trx, org, actor, seen.id, a.after);
        return { id: seen.id, created: false };
      }
    }
    const id = randomUUID();
    await trx
      .insertInto("healing_actions")
      .values({
        id,
        organization_id: org.id,
        device_id: a.deviceId,
        tunnel_id: a.tunnelId,
        ...(a.at ? { at: a.at } : {}),
        kind: a.kind,
        mode: a.mode,
        source: a.source,
        link: a.link,
        reason: a.reason,
        before: toJson(a.before),
        after: toJsonOrNull(a.after),
        agent_ref: a.agentRef ?? null,
      })
      .execute();
    await recordAudit(
      { db: trx, org, actor },
      {
        action: `healing:${a.kind}${a.mode === "suggest" ? ":suggested" : ""}`,
        resource: "healing",
        resourceId: id,
        before: { link: a.link, deviceId: a.deviceId, tunnelId: a.tunnelId, reason: a.reason, figures: a.before },
        after: a.after === null ? null : { figures: a.after },
      },
    );
    return { id, created: true };
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/** The figures after an action, once known (a detour ended, a repaired SA answered); audited as an update. */
export async function completeHealingAction(db: Db, org: OrgRef, actor: Actor, id: string, after: HealingFigures): Promise<void> {
  const write = async (trx: Db) => {
    const row = await trx
      .updateTable("healing_actions")
      .set({ after: toJson(after) })
      .where("id", "=", id)
      .where("organization_id", "=", org.id)
      .returning(["kind", "before"])
      .executeTakeFirst();
    if (row)
      await recordAudit(
        { db: trx, org, actor },
        { action: `healing:${row.kind}:after`, resource: "healing", resourceId: id, before: row.before, after },
      );
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

export function healingActionFromRow(row: HealingActionRow): HealingAction {
  return {
    id: row.id,
    at: row.at.toISOString(),
    kind: row.kind,
    mode: row.mode,
    source: row.source,
    deviceId: row.device_id,
    tunnelId: row.tunnel_id,
    link: row.link,
    reason: row.reason,
    before: row.before as HealingFigures,
    after: (row.after as HealingFigures | null) ?? null,
  };
}

export const HEALING_ACTION_LIST = {
  fields: {
    id: { column: "id", type: "uuid" },
    at: { column: "at", type: "timestamp" },
    kind: { column: "kind", type: "text" },
    mode: { column: "mode", type: "text" },
    source: { column: "source", type: "text" },
    deviceId: { column: "device_id", type: "uuid" },
    tunnelId: { column: "tunnel_id", type: "uuid" },
    link: { column: "link", type: "text" },
  },
  defaultSort: { key: "at", order: "desc" },
  tiebreaker: "id",
} satisfies ListSpec;

export interface HealingActionFilters {
  deviceId?: string | undefined;
  tunnelId?: string | undefined;
  kind?: HealingKind | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

/** The organization's healing actions, newest first by default. */
export async function listHealingActions(ctx: ServiceCtx, f: HealingActionFilters, query: ListQuery) {
  let base = ctx.db.selectFrom("healing_actions").selectAll().where("organization_id", "=", ctx.org.id);
  if (f.deviceId) base = base.where("device_id", "=", f.deviceId);
  if (f.tunnelId) base = base.where("tunnel_id", "=", f.tunnelId);
  if (f.kind) base = base.where("kind", "=", f.kind);
  if (f.since) base = base.where("at", ">=", new Date(f.since));
  if (f.until) base = base.where("at", "<", new Date(f.until));
  const { rows, total } = await runList(ctx.db, base, query, HEALING_ACTION_LIST);
  return { items: rows.map(healingActionFromRow), total };
}
