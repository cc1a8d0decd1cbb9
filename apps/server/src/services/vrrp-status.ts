/**
 * VRRP live state. Members' states are rows (`vrrp_members.state`, `state_since`,
 * `state_reported_at`), so any server instance answers `GET /vrrp/status`.
 * The device gateway plugs in by calling `recordVrrpStates` for each status
 * message; until a member has reported, and whenever its device is not
 * connected, its state reads `unknown`.
 */
import type { DeviceVrrpInterfaces, VrrpGroupStatus, VrrpRouterState } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import { type ListQuery, type ListSpec, runList } from "../http/list-query.ts";
import type { ServiceCtx } from "./context.ts";
import { anyUuid } from "./desired-config.ts";
import { listVrrpGroups } from "./vrrp.ts";

/** `GET /vrrp/status`: the organization's groups (list conventions as `GET /vrrp`) with each member's state. */
export async function getVrrpStatus(ctx: ServiceCtx, query: ListQuery): Promise<{ items: VrrpGroupStatus[]; total: number }> {
  const { items, total, members } = await listVrrpGroups(ctx, query);
  return {
    total,
    items: items.map((g) => ({
      id: g.id,
      name: g.name,
      virtualRouterId: g.virtualRouterId,
      virtualIp: g.virtualIp,
      devices: members
        .filter((m) => m.group_id === g.id)
        .map((m) => {
          const isConnected = m.device_connection === "connected";
          // A disconnected router's last word is not its state now.
          const known = isConnected && m.state !== "unknown";
          return {
            device: m.device_id,
            name: m.device_name,
            interface: m.interface,
            isConnected,
            state: known ? m.state : "unknown",
            since: known && m.state_since ? m.state_since.toISOString() : null,
          };
        }),
    })),
  };
}

/** A device's membership of a group, with its recorded state. */
export interface VrrpMembership {
  device_id: string;
  organization_id: string;
  group_id: string;
  state: VrrpRouterState;
  state_since: Date | null;
  name: string;
}

/** The VRRP memberships of several devices in one statement (the group's organization is each row's). */
export function vrrpMemberships(db: Db, deviceIds: readonly string[]): Promise<VrrpMembership[]> {
  return db
    .selectFrom("vrrp_members as m")
    .innerJoin("vrrp_groups as g", "g.id", "m.group_id")
    .select(["m.device_id", "g.organization_id", "m.group_id", "m.state", "m.state_since", "g.name"])
    .where("m.device_id", "=", anyUuid(deviceIds))
    .execute();
}

/** One VRRP instance as a device reports it (the protocol's `Status.vrrp` entries). */
export interface VrrpStateReport {
  groupId: string;
  state: VrrpRouterState;
  since: string | null;
}

export interface VrrpStateChange {
  groupId: string;
  groupName: string;
  deviceId: string;
  from: VrrpRouterState;
  to: VrrpRouterState;
}

/**
 * Stores what a device reported about its VRRP groups (issue 5's status
 * ingestion calls this) and returns the transitions, for "VRRP state change"
 * notifications. Groups the device is a member of but did not report are
 * `unknown` (not running yet); reports about groups it is not a member of, or
 * of another organization, are ignored. `members` are the device's memberships
 * when the caller read them already (vrrpMemberships, batched across devices).
 */
export async function recordVrrpStates(
  ctx: { db: Db; org: { id: string } },
  deviceId: string,
  reports: readonly VrrpStateReport[],
  at: Date = new Date(),
  members?: readonly VrrpMembership[],
): Promise<VrrpStateChange[]> {
  members ??= (await vrrpMemberships(ctx.db, [deviceId])).filter((m) => m.organization_id === ctx.org.id);
  const byGroup = new Map(reports.map((r) => [r.groupId, r]));
  const changes: VrrpStateChange[] = [];
  for (const m of members) {
    const report = byGroup.get(m.group_id);
    const state = report?.state ?? "unknown";
    const changed = state !== m.state;
    // The device's own time of the transition when it gave one; else when the server first saw the state.
    const reportedSince = report?.since ? new Date(report.since) : null;
    const since = state === "unknown" ? null : (reportedSince ?? (changed || !m.state_since ? at : m.state_since));
    // Status messages repeat the same states every few seconds: write only what changed.
    if (!changed && (since?.getTime() ?? null) === (m.state_since?.getTime() ?? null)) continue;
    await ctx.db
      .updateTable("vrrp_members")
      .set({ state, state_since: since, state_reported_at: at })
      .where("group_id", "=", m.group_id)
      .where("device_id", "=", deviceId)
      .execute();
    if (changed) changes.push({ groupId: m.group_id, groupName: m.name, deviceId, from: m.state, to: state });
  }
  return changes;
}

// ---- LAN interfaces that can carry a group ----

/** An assigned LAN interface with a static address and prefix: what validateVrrpGroup accepts. */
const ELIGIBLE = sql<boolean>`exists (select 1 from jsonb_array_elements(d.interfaces) i
  where i->>'type' = 'LAN' and (i->>'isAssigned')::boolean and not coalesce((i->>'dhcp')::boolean, false)
    and coalesce(i->>'IPv4', '') <> '' and jsonb_typeof(i->'IPv4Mask') = 'number')`;

export const DEVICE_VRRP_INTERFACES_LIST: ListSpec = {
  fields: {
    device: { column: "d.id", type: "uuid" },
    name: { column: "d.name", type: "text" },
    hostname: { column: "d.hostname", type: "text" },
    isApproved: { column: "d.is_approved", type: "boolean" },
    createdAt: { column: "d.created_at", type: "timestamp" },
  },
  defaultSort: { key: "name", order: "asc" },
  tiebreaker: "d.id",
};

/** Per device of the organization, its LAN interfaces that can carry a VRRP group (devices without one are left out). */
export async function listDeviceVrrpInterfaces(
  ctx: ServiceCtx,
  query: ListQuery,
): Promise<{ items: DeviceVrrpInterfaces[]; total: number }> {
  const base = ctx.db
    .selectFrom("devices as d")
    .select(["d.id", "d.name", "d.interfaces"])
    .where("d.organization_id", "=", ctx.org.id)
    .where(ELIGIBLE);
  const { rows, total } = await runList(ctx.db, base, query, DEVICE_VRRP_INTERFACES_LIST);
  return {
    total,
    items: rows.map((d) => ({
      device: d.id,
      name: d.name,
      interfaces: d.interfaces
        .filter((i) => i.type === "LAN" && i.isAssigned && !i.dhcp && i.IPv4 !== "" && i.IPv4Mask !== null)
        .map((i) => ({ devId: i.devId, name: i.name, IPv4: i.IPv4, IPv4Mask: i.IPv4Mask })),
    })),
  };
}
