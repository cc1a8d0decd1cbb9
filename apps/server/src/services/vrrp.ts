/**
 * VRRP groups: a virtual IP that LAN interfaces of several devices share, one
 * of them answering for it at a time. Validated by `validateVrrpGroup` (the
 * virtual router id unique in the organization, the virtual IP inside every
 * member's LAN subnet, members on one L2 subnet); members are kept in the
 * admin's order. Every change recompiles the members, old and new (`vrrp`
 * jobs): their keepalived config and their DHCP `routers` option, which
 * becomes the virtual IP.
 */
import { randomUUID } from "node:crypto";
import type { VrrpGroup, VrrpGroupCreate } from "@tern/protocol";
import { sql } from "kysely";
import type { z } from "zod";
import { toJson } from "../db/json.ts";
import type { VrrpGroupRow } from "../db/schema.ts";
import { ApiError, conflict, notFound } from "../http/errors.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import { problemsToErrorBody, validateVrrpGroup } from "../validate/index.ts";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { anyUuid, queueConfigJobs } from "./desired-config.ts";

type GroupInput = z.output<typeof VrrpGroupCreate>;

export const VRRP_LIST: ListSpec = {
  fields: {
    id: { column: "g.id", type: "uuid" },
    name: { column: "g.name", type: "text" },
    virtualRouterId: { column: "g.virtual_router_id", type: "number" },
    virtualIp: { column: "g.virtual_ip", type: "text" },
    preemption: { column: "g.preemption", type: "boolean" },
    acceptMode: { column: "g.accept_mode", type: "boolean" },
    advertIntervalMs: { column: "g.advert_interval_ms", type: "number" },
    createdAt: { column: "g.created_at", type: "timestamp" },
    updatedAt: { column: "g.updated_at", type: "timestamp" },
  },
  defaultSort: { key: "virtualRouterId", order: "asc" },
  tiebreaker: "g.id",
};

/** The members of `groupIds` in the admin's order, with their device names and reported state. */
export async function loadMembers(ctx: Pick<ServiceCtx, "db">, groupIds: readonly string[]) {
  if (groupIds.length === 0) return [];
  return ctx.db
    .selectFrom("vrrp_members as m")
    .innerJoin("devices as d", "d.id", "m.device_id")
    .selectAll("m")
    .select(["d.name as device_name", "d.connection as device_connection"])
    .where("m.group_id", "=", anyUuid(groupIds))
    .orderBy("m.group_id")
    .orderBy("m.position")
    .execute();
}
type MemberRow = Awaited<ReturnType<typeof loadMembers>>[number];

export function toVrrpGroup(row: VrrpGroupRow, members: readonly MemberRow[]): VrrpGroup {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    virtualRouterId: row.virtual_router_id,
    virtualIp: row.virtual_ip,
    preemption: row.preemption,
    acceptMode: row.accept_mode,
    advertIntervalMs: row.advert_interval_ms,
    devices: members
      .filter((m) => m.group_id === row.id)
      .map((m) => ({
        device: m.device_id,
        name: m.device_name,
        interface: m.interface,
        priority: m.priority,
        trackInterfacesOptional: m.track_optional,
        trackInterfacesMandatory: m.track_mandatory,
      })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const selectGroups = (ctx: ServiceCtx) =>
  ctx.db.selectFrom("vrrp_groups as g").selectAll("g").where("g.organization_id", "=", ctx.org.id);

export async function listVrrpGroups(ctx: ServiceCtx, query: ListQuery) {
  const { rows, total } = await runList(ctx.db, selectGroups(ctx), query, VRRP_LIST);
  const members = await loadMembers(
    ctx,
    rows.map((r) => r.id),
  );
  return { items: rows.map((r) => toVrrpGroup(r, members)), total, members };
}

async function loadGroup(ctx: ServiceCtx, id: string, lock = false) {
  let query = selectGroups(ctx).where("g.id", "=", id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound("VRRP group");
  return toVrrpGroup(row, await loadMembers(ctx, [id]));
}

export function getVrrpGroup(ctx: ServiceCtx, id: string): Promise<VrrpGroup> {
  return loadGroup(ctx, id);
}

/** Runs validateVrrpGroup against the stored members and the organization's other groups; throws the error body. */
async function checkGroup(ctx: ServiceCtx, input: GroupInput, groupId?: string): Promise<void> {
  const ids = [...new Set(input.devices.map((d) => d.device))];
  // FOR SHARE: a member's interfaces cannot change under the check until this change commits.
  const devices = await ctx.db
    .selectFrom("devices")
    .select(["id", "name", "interfaces", "dhcp"])
    .where("organization_id", "=", ctx.org.id)
    .where("id", "=", anyUuid(ids))
    .forShare()
    .execute();
  const otherGroups = await ctx.db
    .selectFrom("vrrp_groups")
    .select(["id", "name", "virtual_router_id"])
    .where("organization_id", "=", ctx.org.id)
    .execute();
  const problems = validateVrrpGroup({
    group: input,
    groupId,
    devices,
    otherGroups: otherGroups.map((g) => ({ id: g.id, name: g.name, virtualRouterId: g.virtual_router_id })),
  });
  const body = problemsToErrorBody(problems);
  if (body) throw new ApiError(body.code, body.error, body.details);
}

function uniqueVrid<T>(promise: Promise<T>, vrid: number): Promise<T> {
  return promise.catch((err: { code?: string }) => {
    if (err?.code === "23505")
      throw conflict(`virtual router id ${vrid} is used by another VRRP group`, [
        { path: "virtualRouterId", message: "must be unique in the organization" },
      ]);
    throw err;
  });
}

async function writeMembers(ctx: ServiceCtx, groupId: string, input: GroupInput): Promise<void> {
  await ctx.db.deleteFrom("vrrp_members").where("group_id", "=", groupId).execute();
  await ctx.db
    .insertInto("vrrp_members")
    .values(
      input.devices.map((m, position) => ({
        group_id: groupId,
        device_id: m.device,
        position,
        interface: m.interface,
        priority: m.priority,
        track_optional: toJson(m.trackInterfacesOptional),
        track_mandatory: toJson(m.trackInterfacesMandatory),
      })),
    )
    .execute();
}

const groupColumns = (input: GroupInput) => ({
  name: input.name,
  virtual_router_id: input.virtualRouterId,
  virtual_ip: input.virtualIp,
  preemption: input.preemption,
  accept_mode: input.acceptMode,
  advert_interval_ms: input.advertIntervalMs,
});

const summary = (g: { name: string; virtualRouterId: number; virtualIp: string }) =>
  `VRRP group ${g.name} (VRID ${g.virtualRouterId}, ${g.virtualIp})`;

export type VrrpGroupChanged = VrrpGroup & { jobIds: string[] };

export async function createVrrpGroup(ctx: ServiceCtx, input: GroupInput): Promise<VrrpGroupChanged> {
  return inTransaction(ctx, async (tx) => {
    await checkGroup(tx, input);
    const id = randomUUID();
    await uniqueVrid(
      tx.db
        .insertInto("vrrp_groups")
        .values({ id, organization_id: tx.org.id, ...groupColumns(input) })
        .execute(),
      input.virtualRouterId,
    );
    await writeMembers(tx, id, input);
    const group = await loadGroup(tx, id);
    await recordAudit(tx, { action: "create", resource: "vrrp", resourceId: id, after: group });
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: input.devices.map((m) => m.device),
      type: "vrrp",
      tasks: [{ kind: "vrrp-add", summary: `add ${summary(group)}` }],
    });
    return { ...group, jobIds };
  });
}

/** Replaces a group; members that left and members that joined are recompiled too. */
export async function updateVrrpGroup(ctx: ServiceCtx, id: string, input: GroupInput): Promise<VrrpGroupChanged> {
  return inTransaction(ctx, async (tx) => {
    const before = await loadGroup(tx, id, true);
    await checkGroup(tx, input, id);
    await uniqueVrid(
      tx.db
        .updateTable("vrrp_groups")
        .set({ ...groupColumns(input), updated_at: sql`now()` })
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", id)
        .execute(),
      input.virtualRouterId,
    );
    await writeMembers(tx, id, input);
    const after = await loadGroup(tx, id);
    await recordAudit(tx, { action: "update", resource: "vrrp", resourceId: id, before, after });
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: [...before.devices.map((m) => m.device), ...after.devices.map((m) => m.device)],
      type: "vrrp",
      tasks: [{ kind: "vrrp-modify", summary: `modify ${summary(after)}` }],
    });
    return { ...after, jobIds };
  });
}

export async function deleteVrrpGroup(ctx: ServiceCtx, id: string): Promise<{ jobIds: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const before = await loadGroup(tx, id, true);
    await tx.db.deleteFrom("vrrp_groups").where("organization_id", "=", tx.org.id).where("id", "=", id).execute();
    await recordAudit(tx, { action: "delete", resource: "vrrp", resourceId: id, before });
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: before.devices.map((m) => m.device),
      type: "vrrp",
      tasks: [{ kind: "vrrp-remove", summary: `remove ${summary(before)}` }],
    });
    return { jobIds };
  });
}
