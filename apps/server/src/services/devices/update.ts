/**
 * `PUT /devices/{id}`: the body merged over the stored device, validated as a
 * whole (the device's own config, what its tunnels and VRRP groups need, LAN
 * overlap with the organization's other devices), stored and audited, and the
 * device's new desired config queued as a `modify` job, together with the
 * devices whose config reads this one (tunnel far ends, VRRP peers). One
 * transaction: on any error nothing is stored and nothing queued.
 */
import { canonicalJson, type Device, type DeviceInterface, type DeviceUpdate, type JobTask } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../db/json.ts";
import type { Db } from "../../db/schema.ts";
import { ApiError, notFound } from "../../http/errors.ts";
import { invalid, type Problem, problemsToErrorBody, validateDevice } from "../../validate/index.ts";
import { assertDeviceRoom } from "../accounts/plan-limits.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid, type CompileSurroundings, loadCompileSurroundings, queueConfigJobs } from "../desired-config.ts";
import { newLanOverlaps } from "../lan-index/check.ts";
import { syncLanIndex } from "../lan-index/store.ts";
import { sealInterfaceSecrets } from "../radio/interface-secrets.ts";
import { approvedDevices, dependentDevices } from "./dependents.ts";
import { DEVICE_COLUMNS, type DeviceReadRow, pendingNotificationsSql, toDevice } from "./devices.ts";
import { applyInterfaceUpdates } from "./interfaces.ts";
import { tagsArray } from "./tags/tags-sql.ts";
import { checkTunnelInterfaces, checkVrrpMembership } from "./update-checks.ts";

export interface DeviceUpdateInput {
  id: string;
  body: DeviceUpdate;
  /**
   * The keys each entry of `body.interfaces` really had in the request (before
   * defaults were filled in), so an entry changes only what it names. Without
   * it every field of an entry counts.
   */
  interfaceKeys?: readonly (readonly string[])[];
  /** `allowOverlapping=true`: a LAN subnet may overlap another device's. */
  allowOverlapping?: boolean;
}

export interface DeviceUpdateResult {
  device: Device;
  /** Jobs queued by the change (empty: nothing the devices run changed). */
  jobIds: string[];
}

/** The device as it would be stored. */
interface MergedDevice {
  name: string;
  description: string;
  isApproved: boolean;
  interfaces: DeviceInterface[];
  staticRoutes: Device["staticRoutes"];
  dhcp: Device["dhcp"];
  bgp: Device["bgp"];
  firewall: Device["firewall"];
  deviceSpecificRulesEnabled: boolean;
  multilink: string | null;
  /** Not part of the desired config: a tag change queues no job. */
  tags: string[];
}

/**
 * A device is approved only once it holds a key (it registered with one): approving a device without
 * one (its identity was reset) would trust whichever machine registers its machine id next.
 */
function requireIdentity(row: LockedRow): void {
  if (!row.has_key)
    throw new ApiError(
      "CONFLICT",
      "the device has no identity (its identity was reset, or it registered before device keys): register the router again, then approve it",
      [{ path: "isApproved", message: "the device must register with its key first" }],
    );
}

type LockedRow = DeviceReadRow & { has_key: boolean; desired_stale: boolean; max_devices: number | null };

/**
 * findDeviceRow, locked, with whether the device holds a key, whether a fan-out left it stale and its account's
 * device limit (null: none), in one statement.
 */
async function findLockedRow(db: Db, orgId: string, id: string): Promise<LockedRow | null> {
  return (
    (await db
      .selectFrom("devices as d")
      .select([
        ...DEVICE_COLUMNS,
        pendingNotificationsSql.as("pending_notifications"),
        sql<boolean>`d.public_key is not null`.as("has_key"),
        "d.desired_stale",
        sql<number | null>`(select a.max_devices from organizations o join accounts a on a.id = o.account_id
          where o.id = d.organization_id)`.as("max_devices"),
      ])
      .where("d.organization_id", "=", orgId)
      .where("d.id", "=", id)
      .forUpdate("d")
      .executeTakeFirst()) ?? null
  );
}

/** What a stored JSON value reads back as (the response is built without reading the row again). */
const asStored = <T>(value: T): T => JSON.parse(toJson(value)) as T;

function merge(row: DeviceReadRow, input: DeviceUpdateInput): { merged: MergedDevice; problems: Problem[] } {
  const { body } = input;
  const applied = body.interfaces
    ? applyInterfaceUpdates(row.interfaces, body.interfaces, input.interfaceKeys)
    : { interfaces: row.interfaces, problems: [] };
  return {
    merged: {
      name: body.name ?? row.name,
      description: body.description ?? row.description,
      isApproved: body.isApproved ?? row.is_approved,
      interfaces: applied.interfaces,
      staticRoutes: body.staticRoutes ?? row.static_routes,
      dhcp: body.dhcp ?? row.dhcp,
      bgp: body.bgp ?? row.bgp,
      firewall: body.firewall ?? row.firewall,
      deviceSpecificRulesEnabled: body.deviceSpecificRulesEnabled ?? row.device_specific_rules_enabled,
      multilink: body.policies ? body.policies.multilink : row.mlpolicy_id,
      tags: body.tags ?? row.tags,
    },
    problems: applied.problems,
  };
}

/**
 * The interfaces in the order the body names them, the rest after, so the
 * validators' `interfaces.<i>` paths point at the body's entries.
 */
function inBodyOrder(interfaces: readonly DeviceInterface[], body: DeviceUpdate): DeviceInterface[] {
  const order = (body.interfaces ?? []).map((i) => i.devId);
  const rank = (i: DeviceInterface) => {
    const at = order.indexOf(i.devId);
    return at === -1 ? order.length : at;
  };
  return [...interfaces].sort((a, b) => rank(a) - rank(b));
}

/** Names of the sections the body changes, for the job's task. */
function changedSections(row: DeviceReadRow, merged: MergedDevice): string[] {
  const before: Record<string, unknown> = {
    name: row.name,
    interfaces: row.interfaces,
    staticRoutes: row.static_routes,
    dhcp: row.dhcp,
    bgp: row.bgp,
    firewall: row.firewall,
    deviceSpecificRulesEnabled: row.device_specific_rules_enabled,
    policies: row.mlpolicy_id,
  };
  const { tags: _tags, ...configured } = merged;
  const after: Record<string, unknown> = { ...configured, policies: merged.multilink };
  // Canonical JSON: jsonb does not keep the key order of what was written.
  return Object.keys(before).filter((k) => canonicalJson(before[k]) !== canonicalJson(after[k]));
}

async function collectProblems(
  ctx: ServiceCtx,
  row: DeviceReadRow,
  input: DeviceUpdateInput,
  merged: MergedDevice,
  around: CompileSurroundings,
) {
  const orgId = ctx.org.id;
  const { body } = input;
  const ordered = { ...merged, interfaces: inBodyOrder(merged.interfaces, body) };
  const problems = validateDevice(ordered, {
    tunnelRange: around.org.tunnel_range,
    pathLabelIds: around.pathLabels.map((l) => l.id),
  });

  // The surroundings were loaded with the policy the change sets (in the organization, or not found).
  if (merged.multilink && merged.multilink !== row.mlpolicy_id && !around.policies.has(merged.multilink))
    problems.push(invalid("policies.multilink", `no multi-link policy ${merged.multilink} in the organization`));

  const bodyIndex = (devId: string) => (body.interfaces ?? []).findIndex((i) => i.devId === devId);
  const pathOf = (devId: string) => (bodyIndex(devId) === -1 ? "interfaces" : `interfaces.${bodyIndex(devId)}`);
  const nameOf = (id: string) => (id === row.id ? row.name : around.farEnds.get(id)?.name);
  const ends = around.tunnels.map((t) =>
    t.device_a === row.id
      ? {
          num: t.num,
          interfaceId: t.interface_a,
          other: t.device_b ? `device ${nameOf(t.device_b)}` : `peer ${t.peer_id ? around.peers.get(t.peer_id)?.name : ""}`,
        }
      : { num: t.num, interfaceId: t.interface_b ?? "", other: `device ${nameOf(t.device_a)}` },
  );
  problems.push(...checkTunnelInterfaces(merged.interfaces, ends, pathOf));

  const groups = around.vrrpGroups;
  if (groups.length) {
    const memberIds = [...new Set(groups.flatMap((g) => g.devices.map((m) => m.device)))];
    const members = await ctx.db
      .selectFrom("devices")
      .select(["id", "name", "interfaces", "dhcp"])
      .where("organization_id", "=", orgId)
      .where("id", "=", anyUuid(memberIds))
      .execute();
    const allGroups = await ctx.db
      .selectFrom("vrrp_groups")
      .select(["id", "name", "virtual_router_id as virtualRouterId"])
      .where("organization_id", "=", orgId)
      .execute();
    problems.push(
      ...checkVrrpMembership({
        deviceId: row.id,
        before: { id: row.id, name: row.name, interfaces: row.interfaces, dhcp: row.dhcp },
        after: { id: row.id, name: merged.name, interfaces: merged.interfaces, dhcp: merged.dhcp },
        groups,
        members,
        allGroups,
        path: body.interfaces || !body.dhcp ? "interfaces" : "dhcp",
      }),
    );
  }

  if (!input.allowOverlapping) problems.push(...(await lanOverlapsOf(ctx, row, body, merged, groups)));
  return problems;
}

/** The LAN overlaps this change creates (services/lan-index: an index lookup, not a scan of the organization). */
async function lanOverlapsOf(
  ctx: ServiceCtx,
  row: DeviceReadRow,
  body: DeviceUpdate,
  merged: MergedDevice,
  groups: CompileSurroundings["vrrpGroups"],
): Promise<Problem[]> {
  // Same interfaces and firewall (an approval, a rename): every overlap the change has, the device had.
  if (
    canonicalJson(row.interfaces) === canonicalJson(merged.interfaces) &&
    canonicalJson(row.firewall) === canonicalJson(merged.firewall)
  )
    return [];
  const before = { id: row.id, name: row.name, interfaces: inBodyOrder(row.interfaces, body), firewall: row.firewall };
  const after = { ...merged, id: row.id, interfaces: inBodyOrder(merged.interfaces, body) };
  return newLanOverlaps(ctx.db, ctx.org.id, before, after, groups);
}

export async function updateDevice(ctx: ServiceCtx, input: DeviceUpdateInput): Promise<DeviceUpdateResult> {
  return inTransaction(ctx, async (tx) => {
    const row = await findLockedRow(tx.db, tx.org.id, input.id);
    if (!row) throw notFound("device");
    if (input.body.isApproved && !row.is_approved) {
      requireIdentity(row);
      // An account without a device limit (every self-hosted one) needs neither the account's lock nor a count. A
      // limit set while this runs applies from the next approval, as to the approvals committed just before it.
      if (row.max_devices !== null) await assertDeviceRoom(tx.db, tx.org.accountId, 1, true);
    }
    const { merged, problems } = merge(row, input);
    // Radio secrets (SIM PIN, APN password, WPA passphrase) are stored encrypted, never in clear.
    const bodyIndex = (devId: string) => (input.body.interfaces ?? []).findIndex((i) => i.devId === devId);
    const radio = sealInterfaceSecrets(tx.keyring, row.id, row.interfaces, merged.interfaces, (devId) =>
      bodyIndex(devId) === -1 ? "interfaces" : `interfaces.${bodyIndex(devId)}`,
    );
    merged.interfaces = radio.interfaces;
    problems.push(...radio.problems);
    // What the compile reads around the device, read once: the checks below and the compile use the same rows,
    // with the multi-link policy the change sets, so the check and the compile read it once.
    const around = await loadCompileSurroundings(tx.db, tx.keyring, tx.org.id, [{ id: row.id, mlpolicy_id: merged.multilink }]);
    problems.push(...(await collectProblems(tx, row, input, merged, around)));
    const error = problemsToErrorBody(problems);
    if (error) throw new ApiError(error.code, error.error, error.details);

    const sections = changedSections(row, merged);
    const changes = {
      name: merged.name,
      description: merged.description,
      is_approved: merged.isApproved,
      interfaces: toJson(merged.interfaces),
      static_routes: toJson(merged.staticRoutes),
      dhcp: toJson(merged.dhcp),
      bgp: toJson(merged.bgp),
      firewall: toJson(merged.firewall),
      device_specific_rules_enabled: merged.deviceSpecificRulesEnabled,
      mlpolicy_id: merged.multilink,
      tags: tagsArray(merged.tags),
    };
    // The LAN index is a function of the interfaces and the firewall: unchanged (an approval, a rename), kept.
    if (
      canonicalJson(row.interfaces) !== canonicalJson(merged.interfaces) ||
      canonicalJson(row.firewall) !== canonicalJson(merged.firewall)
    )
      await syncLanIndex(tx.db, {
        id: row.id,
        organizationId: tx.org.id,
        interfaces: merged.interfaces,
        firewall: merged.firewall,
      });

    // The config columns as they now read (stored JSON), for the compile and the answer: no second read of the row.
    const now = {
      id: row.id,
      name: merged.name,
      interfaces: asStored(merged.interfaces),
      static_routes: asStored(merged.staticRoutes),
      dhcp: asStored(merged.dhcp),
      bgp: asStored(merged.bgp),
      firewall: asStored(merged.firewall),
      device_specific_rules_enabled: merged.deviceSpecificRulesEnabled,
      mlpolicy_id: merged.multilink,
    };
    const jobIds: string[] = [];
    let desiredHash = row.desired_hash;
    let updatedAt: Date;
    const approvedNow = merged.isApproved && !row.is_approved;
    if (merged.isApproved) {
      const summary = approvedNow
        ? `approved ${merged.name}: full configuration`
        : `${merged.name}: ${sections.join(", ")} changed`;
      const tasks: JobTask[] = [{ kind: approvedNow ? "approve-device" : "modify-device", summary }];
      // Approval always sends the whole config, even when an earlier compile already stored the same hash.
      const queued = await queueConfigJobs(tx, {
        deviceIds: [row.id],
        type: "modify",
        tasks,
        force: approvedNow,
        surroundings: around,
        // Locked above (FOR UPDATE), compiled as it will read, and written with its desired config in one UPDATE.
        locked: [{ ...now, desired_hash: row.desired_hash, desired_stale: row.desired_stale }],
        rowChanges: changes,
      });
      jobIds.push(...queued.jobIds);
      desiredHash = queued.hashes.get(row.id) ?? desiredHash;
      updatedAt = queued.updatedAt!;
    } else
      ({ updated_at: updatedAt } = await tx.db
        .updateTable("devices")
        .set({ ...changes, updated_at: sql`now()` })
        .where("id", "=", row.id)
        .returning("updated_at")
        .executeTakeFirstOrThrow());
    if (sections.length) {
      const dependents = await approvedDevices(tx.db, tx.org.id, await dependentDevices(tx.db, tx.org.id, [row.id]));
      const tasks: JobTask[] = [
        { kind: "peer-device-changed", summary: `device ${merged.name} changed (${sections.join(", ")})` },
      ];
      jobIds.push(...(await queueConfigJobs(tx, { deviceIds: dependents, type: "modify", tasks })).jobIds);
    }

    // The row as it now reads (the update above and the compile's desired hash), without reading it again.
    const { has_key: _, desired_stale: __, max_devices: ___, ...stored } = row;
    const device = toDevice({
      ...stored,
      ...now,
      description: merged.description,
      is_approved: merged.isApproved,
      tags: merged.tags,
      desired_hash: desiredHash,
      updated_at: updatedAt,
    });
    const before = toDevice(row);
    await recordAudit(tx, {
      action: approvedNow ? "approve" : "update",
      resource: "devices",
      resourceId: row.id,
      before,
      after: device,
    });
    return { device, jobIds };
  });
}
