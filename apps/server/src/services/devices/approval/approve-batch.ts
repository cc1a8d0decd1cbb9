/**
 * One batch of a bulk approval, set-based: one transaction, a fixed number of
 * statements whatever the batch size (device rows with the account's device
 * limit, the organization's tunnel range and path labels, the batch's tunnels
 * and VRRP groups, one compile-and-queue whose UPDATE also writes the
 * approval, one audit insert; the account's lock and count only when it has
 * a limit),
 * with exactly the checks `PUT /devices/{id} {isApproved: true}` makes
 * (services/devices/update.ts): an identity key, the device's config valid as
 * a whole, its tunnels' interfaces, its VRRP groups. An approval changes no
 * interface or firewall, so it creates no LAN overlap and leaves the LAN
 * index as registration wrote it (the single approval skips both for the same
 * reason; rewriting 10,000 devices' rows with their GiST entries was a tenth
 * of a bulk approval's time on PGlite), and changes no section a dependent
 * device's config reads (no dependent jobs). Refused devices are left out of
 * every write; the others are approved together.
 */
import type { JobTask } from "@tern/protocol";
import { sql } from "kysely";
import { ApiError, notFound } from "../../../http/errors.ts";
import { type Problem, problemsToErrorBody, validateDevice } from "../../../validate/index.ts";
import { deviceLimitReached, deviceRoom } from "../../accounts/plan-limits.ts";
import { recordAuditMany } from "../../audit.ts";
import { inTransaction, type ServiceCtx } from "../../context.ts";
import { anyUuid, loadVrrpGroups, queueConfigJobs } from "../../desired-config.ts";
import { DEVICE_COLUMNS, type DeviceReadRow, pendingNotificationsSql, toDevice } from "../devices.ts";
import { checkTunnelInterfaces, checkVrrpMembership } from "../update-checks.ts";
import type { ApprovalResult } from "./approve-many.ts";

type Row = DeviceReadRow & { public_key: string | null; desired_stale: boolean; max_devices: number | null };

const IDENTITY_MESSAGE =
  "the device has no identity (its identity was reset, or it registered before device keys): register the router again, then approve it";

function refusal(id: string, error: ApiError): ApprovalResult {
  return { id, status: "refused", code: error.code, error: error.message };
}

/** Approves the batch's pending devices; results in the order of `ids` (ids approved already are skipped). */
export async function approveBatch(
  ctx: ServiceCtx,
  ids: readonly string[],
): Promise<{ results: ApprovalResult[]; jobIds: string[] }> {
  if (ids.length === 0) return { results: [], jobIds: [] };
  return inTransaction(ctx, async (tx) => {
    const orgId = tx.org.id;
    const rows = (await tx.db
      .selectFrom("devices as d")
      .select([
        ...DEVICE_COLUMNS,
        "d.public_key",
        "d.desired_stale",
        pendingNotificationsSql.as("pending_notifications"),
        sql<number | null>`(select a.max_devices from accounts a where a.id = ${tx.org.accountId}::uuid)`.as("max_devices"),
      ])
      .where("d.organization_id", "=", orgId)
      .where("d.id", "=", anyUuid(ids))
      .orderBy("d.id")
      .forUpdate("d")
      .execute()) as Row[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const org = await tx.db.selectFrom("organizations").select("tunnel_range").where("id", "=", orgId).executeTakeFirstOrThrow();
    const labels = (await tx.db.selectFrom("path_labels").select("id").where("organization_id", "=", orgId).execute()).map(
      (l) => l.id,
    );
    const tunnels = await tx.db
      .selectFrom("tunnels as t")
      .leftJoin("devices as a", "a.id", "t.device_a")
      .leftJoin("devices as b", "b.id", "t.device_b")
      .leftJoin("peers as p", "p.id", "t.peer_id")
      .select(["t.num", "t.device_a", "t.device_b", "t.interface_a", "t.interface_b", "a.name as a_name", "b.name as b_name"])
      .select("p.name as peer_name")
      .where("t.organization_id", "=", orgId)
      .where((eb) => eb.or([eb("t.device_a", "=", anyUuid(ids)), eb("t.device_b", "=", anyUuid(ids))]))
      .execute();
    const groups = await loadVrrpGroups(tx.db, orgId, ids);
    const memberIds = [...new Set(groups.flatMap((g) => g.devices.map((m) => m.device)))];
    const members = memberIds.length
      ? await tx.db
          .selectFrom("devices")
          .select(["id", "name", "interfaces", "dhcp"])
          .where("organization_id", "=", orgId)
          .where("id", "=", anyUuid(memberIds))
          .execute()
      : [];
    const allGroups = groups.length
      ? await tx.db
          .selectFrom("vrrp_groups")
          .select(["id", "name", "virtual_router_id as virtualRouterId"])
          .where("organization_id", "=", orgId)
          .execute()
      : [];

    // The account's plan may allow fewer approved devices than the batch holds: the first ones fit, the rest are refused.
    // An account without a device limit (every self-hosted one) needs neither the account's lock nor a count, as
    // for one approval (services/devices/update.ts): the lock made the two batches in flight take turns.
    const limit = rows.some((r) => r.max_devices !== null) ? await deviceRoom(tx.db, tx.org.accountId, true) : null;
    const results = new Map<string, ApprovalResult>();
    const approve: Row[] = [];
    for (const row of rows) {
      if (row.is_approved) continue;
      if (row.public_key === null) {
        results.set(
          row.id,
          refusal(
            row.id,
            new ApiError("CONFLICT", IDENTITY_MESSAGE, [
              { path: "isApproved", message: "the device must register with its key first" },
            ]),
          ),
        );
        continue;
      }
      const merged = {
        name: row.name,
        description: row.description,
        isApproved: true,
        interfaces: row.interfaces,
        staticRoutes: row.static_routes,
        dhcp: row.dhcp,
        bgp: row.bgp,
        firewall: row.firewall,
        deviceSpecificRulesEnabled: row.device_specific_rules_enabled,
        multilink: row.mlpolicy_id,
      };
      const problems: Problem[] = validateDevice(merged, { tunnelRange: org.tunnel_range, pathLabelIds: labels });
      const ends = tunnels
        .filter((t) => t.device_a === row.id || t.device_b === row.id)
        .map((t) =>
          t.device_a === row.id
            ? { num: t.num, interfaceId: t.interface_a, other: t.b_name ? `device ${t.b_name}` : `peer ${t.peer_name}` }
            : { num: t.num, interfaceId: t.interface_b ?? "", other: `device ${t.a_name}` },
        );
      problems.push(...checkTunnelInterfaces(merged.interfaces, ends, () => "interfaces"));
      const own = groups.filter((g) => g.devices.some((m) => m.device === row.id));
      if (own.length) {
        const device = { id: row.id, name: row.name, interfaces: row.interfaces, dhcp: row.dhcp };
        problems.push(
          ...checkVrrpMembership({
            deviceId: row.id,
            before: device,
            after: device,
            groups: own,
            members,
            allGroups,
            path: "interfaces",
          }),
        );
      }
      const error = problemsToErrorBody(problems);
      if (error) results.set(row.id, refusal(row.id, new ApiError(error.code, error.error, error.details)));
      else if (limit && approve.length >= limit.room) results.set(row.id, refusal(row.id, deviceLimitReached(limit.max)));
      else approve.push(row);
    }

    const jobIds: string[] = [];
    const jobsOf = new Map<string, number>();
    if (approve.length) {
      const approveIds = approve.map((r) => r.id);
      const names = new Map(approve.map((r) => [r.id, r.name]));
      const tasks = (deviceId: string): JobTask[] => [
        { kind: "approve-device", summary: `approved ${names.get(deviceId)}: full configuration` },
      ];
      // The rows locked above, approved: not locked and read again. The approval is written by the UPDATE that
      // stores each device's new desired config (one write of each row, not two).
      const locked = approve.map(({ public_key: _, max_devices: __, ...r }) => ({ ...r, is_approved: true }));
      const queued = await queueConfigJobs(tx, {
        deviceIds: approveIds,
        type: "modify",
        tasks,
        force: true,
        locked,
        alsoSet: { is_approved: true },
      });
      jobIds.push(...queued.jobIds);
      for (const deviceId of queued.jobDevices) jobsOf.set(deviceId, (jobsOf.get(deviceId) ?? 0) + 1);
      // The rows as they now read, without reading them again (as one approval does): locked since the batch
      // read them, changed only by the UPDATE above, whose `updated_at` is the transaction's time as the column
      // stores it (milliseconds, rounded).
      const { now } = await sql<{ now: Date }>`select now()::timestamptz(3) as now`.execute(tx.db).then((r) => r.rows[0]!);
      await recordAuditMany(
        tx,
        approve.map((r) => ({
          action: "approve",
          resource: "devices",
          resourceId: r.id,
          before: toDevice(r),
          after: toDevice({
            ...r,
            is_approved: true,
            desired_hash: queued.hashes.get(r.id) ?? r.desired_hash,
            updated_at: now,
          }),
        })),
      );
      for (const r of approve) results.set(r.id, { id: r.id, status: "approved", jobs: jobsOf.get(r.id) ?? 0 });
    }
    const ordered: ApprovalResult[] = [];
    for (const id of ids) {
      const result = results.get(id);
      if (result) ordered.push(result);
      // Deleted since the selection: what the single approval answers then.
      else if (!byId.has(id)) ordered.push(refusal(id, notFound("device")));
    }
    return { results: ordered, jobIds };
  });
}
