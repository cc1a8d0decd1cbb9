/**
 * Deleting devices (`DELETE /devices/{id}`, `DELETE /devices` by filter), in
 * one transaction:
 *   - a device in a VRRP group is refused with VRRP_INSTALLED_ON_DEVICE
 *     unless `removeVrrp`; with it, the device leaves its groups (a group left
 *     without members is deleted) and the remaining members get `vrrp` jobs;
 *   - its tunnels are deleted and their far ends get `deltunnels` jobs;
 *   - its jobs and notifications go with it.
 * Every deletion is audited (device, tunnel, VRRP group change).
 */
import type { Filter, JobTask } from "@tern/protocol";
import { ApiError, invalidField, notFound } from "../../http/errors.ts";
import { filterCondition } from "../../http/list-query.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid, queueConfigJobs } from "../desired-config.ts";
import { approvedDevices } from "./dependents.ts";
import { DEVICE_COLUMNS, DEVICE_LIST, type DeviceReadRow, pendingNotificationsSql, toDevice } from "./devices.ts";

export interface DeleteOptions {
  /** Remove the devices from their VRRP groups instead of refusing. */
  removeVrrp: boolean;
}

export interface DevicesDeleted {
  deviceIds: string[];
  jobIds: string[];
}

export async function deleteDevice(ctx: ServiceCtx, id: string, options: DeleteOptions): Promise<DevicesDeleted> {
  return inTransaction(ctx, async (tx) => {
    const rows = await lockDevices(tx, (q) => q.where("d.id", "=", id));
    if (rows.length === 0) throw notFound("device");
    return removeDevices(tx, rows, options);
  });
}

export interface DeleteManyInput extends DeleteOptions {
  filter: Filter[];
  ids?: readonly string[];
  /** Required to delete every device of the organization (no filter, no ids). */
  all: boolean;
}

/** Every device matching the filter (and `ids`), without paging. */
export async function deleteDevices(ctx: ServiceCtx, input: DeleteManyInput): Promise<DevicesDeleted> {
  if (input.filter.length === 0 && !input.ids && !input.all)
    throw invalidField(
      "filter",
      "give a filter or ids to choose the devices to delete, or all=true to delete every device of the organization",
    );
  return inTransaction(ctx, async (tx) => {
    const rows = await lockDevices(tx, (q) => {
      let scoped = input.ids ? q.where("d.id", "=", anyUuid(input.ids)) : q;
      input.filter.forEach((f, i) => {
        scoped = scoped.where(filterCondition(f, DEVICE_LIST, i));
      });
      return scoped;
    });
    if (rows.length === 0) return { deviceIds: [], jobIds: [] };
    return removeDevices(tx, rows, input);
  });
}

function baseQuery(ctx: ServiceCtx) {
  return ctx.db
    .selectFrom("devices as d")
    .select([...DEVICE_COLUMNS, pendingNotificationsSql.as("pending_notifications")])
    .where("d.organization_id", "=", ctx.org.id);
}

async function lockDevices(
  ctx: ServiceCtx,
  narrow: (q: ReturnType<typeof baseQuery>) => ReturnType<typeof baseQuery>,
): Promise<DeviceReadRow[]> {
  return narrow(baseQuery(ctx)).orderBy("d.id").forUpdate("d").execute();
}

async function removeDevices(ctx: ServiceCtx, rows: DeviceReadRow[], options: DeleteOptions): Promise<DevicesDeleted> {
  const orgId = ctx.org.id;
  const ids = rows.map((r) => r.id);
  const gone = new Set(ids);
  const nameOf = new Map(rows.map((r) => [r.id, r.name]));

  const memberships = await ctx.db
    .selectFrom("vrrp_members as m")
    .innerJoin("vrrp_groups as g", "g.id", "m.group_id")
    .select(["g.id as group_id", "g.name as group_name", "m.device_id"])
    .where("g.organization_id", "=", orgId)
    .where("m.device_id", "=", anyUuid(ids))
    .orderBy("g.name")
    .execute();
  if (memberships.length && !options.removeVrrp) {
    const groups = [...new Set(memberships.map((m) => m.group_name))];
    throw new ApiError(
      "VRRP_INSTALLED_ON_DEVICE",
      `${memberships.length === 1 ? `device ${nameOf.get(memberships[0]!.device_id)} is` : "devices are"} in VRRP group${groups.length > 1 ? "s" : ""} ${groups.join(", ")}; delete with removeVrrp=true to remove ${ids.length > 1 ? "them" : "it"} from the group${groups.length > 1 ? "s" : ""}`,
      memberships.map((m) => ({
        path: "removeVrrp",
        message: `device ${nameOf.get(m.device_id)} is in VRRP group ${m.group_name}`,
      })),
    );
  }

  const tasks = new Map<string, JobTask[]>();
  const addTask = (deviceId: string, task: JobTask) => tasks.set(deviceId, [...(tasks.get(deviceId) ?? []), task]);

  // Leave the VRRP groups; a group without members is deleted.
  const vrrpPeers = new Set<string>();
  for (const groupId of [...new Set(memberships.map((m) => m.group_id))]) {
    const members = await ctx.db
      .selectFrom("vrrp_members")
      .select("device_id")
      .where("group_id", "=", groupId)
      .orderBy("position")
      .execute();
    const group = memberships.find((m) => m.group_id === groupId)!;
    const remaining = members.map((m) => m.device_id).filter((d) => !gone.has(d));
    const leaving = members.map((m) => m.device_id).filter((d) => gone.has(d));
    if (remaining.length === 0) {
      await ctx.db.deleteFrom("vrrp_groups").where("id", "=", groupId).execute();
      await recordAudit(ctx, {
        action: "delete",
        resource: "vrrp",
        resourceId: groupId,
        before: { name: group.group_name, devices: leaving },
      });
      continue;
    }
    await ctx.db.deleteFrom("vrrp_members").where("group_id", "=", groupId).where("device_id", "=", anyUuid(leaving)).execute();
    await recordAudit(ctx, {
      action: "update",
      resource: "vrrp",
      resourceId: groupId,
      before: { name: group.group_name, devices: members.map((m) => m.device_id) },
      after: { name: group.group_name, devices: remaining },
    });
    for (const peer of remaining) {
      vrrpPeers.add(peer);
      addTask(peer, {
        kind: "vrrp-member-removed",
        summary: `VRRP group ${group.group_name}: ${leaving.map((d) => nameOf.get(d)).join(", ")} removed`,
      });
    }
  }

  // Delete the tunnels; their far ends drop them.
  const tunnels = await ctx.db
    .selectFrom("tunnels")
    .select(["id", "num", "device_a", "device_b", "peer_id"])
    .where("organization_id", "=", orgId)
    .where((eb) => eb.or([eb("device_a", "=", anyUuid(ids)), eb("device_b", "=", anyUuid(ids))]))
    .orderBy("num")
    .execute();
  const farEnds = new Set<string>();
  if (tunnels.length) {
    await ctx.db
      .deleteFrom("tunnels")
      .where("id", "=", anyUuid(tunnels.map((t) => t.id)))
      .execute();
    for (const t of tunnels) {
      await recordAudit(ctx, {
        action: "delete",
        resource: "tunnels",
        resourceId: t.id,
        before: { num: t.num, deviceA: t.device_a, deviceB: t.device_b, peer: t.peer_id },
      });
      for (const [end, other] of [
        [t.device_a, t.device_b],
        [t.device_b, t.device_a],
      ] as const) {
        if (!end || gone.has(end)) continue;
        farEnds.add(end);
        addTask(end, { kind: "delete-tunnel", summary: `tunnel ${t.num} to deleted device ${nameOf.get(other!)}` });
      }
    }
  }

  await ctx.db.deleteFrom("devices").where("organization_id", "=", orgId).where("id", "=", anyUuid(ids)).execute();
  for (const row of rows)
    await recordAudit(ctx, { action: "delete", resource: "devices", resourceId: row.id, before: toDevice(row) });

  const taskFor = (deviceId: string) => tasks.get(deviceId) ?? [];
  const jobIds: string[] = [];
  const tunnelJobs = await approvedDevices(ctx.db, orgId, [...farEnds]);
  jobIds.push(...(await queueConfigJobs(ctx, { deviceIds: tunnelJobs, type: "deltunnels", tasks: taskFor })).jobIds);
  const vrrpJobs = await approvedDevices(
    ctx.db,
    orgId,
    [...vrrpPeers].filter((d) => !farEnds.has(d)),
  );
  jobIds.push(...(await queueConfigJobs(ctx, { deviceIds: vrrpJobs, type: "vrrp", tasks: taskFor })).jobIds);
  return { deviceIds: ids, jobIds };
}
