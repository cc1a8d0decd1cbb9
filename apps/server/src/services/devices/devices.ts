/**
 * Devices: reads (list in three sizes, one device) and the mapping from rows
 * to the protocol's Device. Changes live in device-update.ts, device-delete.ts
 * and device-registration.ts.
 */
import type { Device, DeviceInterface, DeviceSummary } from "@tern/protocol";
import { type RawBuilder, sql } from "kysely";
import { rowCount, rowVersion } from "../../db/row-counts.ts";
import type { Db, DeviceRow } from "../../db/schema.ts";
import { notFound } from "../../http/errors.ts";
import { type ListSpec, runList, type ServerListQuery } from "../../http/list-query.ts";
import type { ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { publicInterface } from "../radio/interface-secrets.ts";

/** Unread, unresolved notifications of the device `d`, counted in SQL (uses the partial index notifications_pending_idx). */
export const pendingNotificationsSql: RawBuilder<number> = sql<number>`(select count(*)::int from notifications n
  where n.device_id = d.id and n.resolved = false and n.is_read = false)`;

/** Every column a Device is built from (not the token hash, not the compiled config). */
export const DEVICE_COLUMNS = [
  "d.id",
  "d.organization_id",
  "d.name",
  "d.description",
  "d.hostname",
  "d.machine_id",
  "d.is_approved",
  "d.agent_version",
  "d.protocol_version",
  "d.interfaces",
  "d.static_routes",
  "d.dhcp",
  "d.bgp",
  "d.firewall",
  "d.device_specific_rules_enabled",
  "d.mlpolicy_id",
  "d.tags",
  "d.data_plane",
  "d.desired_hash",
  "d.applied_hash",
  "d.connection",
  "d.last_connected_at",
  "d.created_at",
  "d.updated_at",
] as const;

export type DeviceReadRow = Omit<
  DeviceRow,
  | "device_token_hash"
  | "public_key"
  | "identity_proof_at"
  | "desired_config_enc"
  | "desired_tunnel_ids"
  | "desired_stale"
  | "disconnected_at"
  | "last_seen_at"
  | "sync_attempts"
  | "auto_sync_paused"
  | "interfaces_summary"
> & { pending_notifications: number };

/** A stored interface with the read-only fields an older row may lack filled in. */
function readInterface(iface: DeviceInterface): DeviceInterface {
  return { ...publicInterface(iface), isPublicAddressRateLimited: iface.isPublicAddressRateLimited ?? false };
}

export function toDevice(row: DeviceReadRow): Device {
  return {
    id: row.id,
    org: row.organization_id,
    name: row.name,
    description: row.description,
    hostname: row.hostname,
    machineId: row.machine_id,
    isApproved: row.is_approved,
    connection: row.connection,
    isConnected: row.connection === "connected",
    versions: { agent: row.agent_version, protocol: row.protocol_version },
    interfaces: row.interfaces.map(readInterface),
    staticRoutes: row.static_routes,
    dhcp: row.dhcp,
    bgp: row.bgp,
    firewall: row.firewall,
    deviceSpecificRulesEnabled: row.device_specific_rules_enabled,
    policies: { multilink: row.mlpolicy_id },
    tags: row.tags,
    dataPlane: row.data_plane,
    pendingNotifications: row.pending_notifications,
    desiredHash: row.desired_hash,
    appliedHash: row.applied_hash,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastConnectedAt: row.last_connected_at ? row.last_connected_at.toISOString() : null,
  };
}

type SummaryRow = Pick<
  DeviceReadRow,
  "id" | "name" | "hostname" | "is_approved" | "connection" | "interfaces" | "pending_notifications" | "tags"
>;

export function toDeviceSummary(row: SummaryRow): DeviceSummary {
  return {
    id: row.id,
    name: row.name,
    hostname: row.hostname,
    isApproved: row.is_approved,
    isConnected: row.connection === "connected",
    pendingNotifications: row.pending_notifications,
    tags: row.tags,
    interfaces: row.interfaces.map((i) => ({
      id: i.id,
      name: i.name,
      type: i.type,
      IPv4: i.IPv4,
      IPv4Mask: i.IPv4Mask,
      isPublicAddressRateLimited: i.isPublicAddressRateLimited ?? false,
    })),
  };
}

const interfaceField = (expr: RawBuilder<unknown>, type: "text" | "boolean" | "number") => ({
  column: expr,
  type,
  elements: sql`jsonb_array_elements(d.interfaces) as e`,
});

export const DEVICE_LIST: ListSpec = {
  fields: {
    id: { column: "d.id", type: "uuid" },
    name: { column: "d.name", type: "text" },
    description: { column: "d.description", type: "text" },
    hostname: { column: "d.hostname", type: "text" },
    machineId: { column: "d.machine_id", type: "text" },
    isApproved: { column: "d.is_approved", type: "boolean" },
    isConnected: { column: sql`(d.connection = 'connected')`, type: "boolean" },
    connection: { column: "d.connection", type: "text" },
    "versions.agent": { column: "d.agent_version", type: "text" },
    "versions.protocol": { column: "d.protocol_version", type: "number" },
    "policies.multilink": { column: "d.mlpolicy_id", type: "uuid" },
    tags: { column: "d.tags", type: "tags", sortable: false },
    dataPlane: { column: "d.data_plane", type: "text" },
    // Counted from the notifications: a filtered total on it is not kept (the devices' version does not follow it).
    pendingNotifications: { column: pendingNotificationsSql, type: "number", keepsTotal: false },
    desiredHash: { column: "d.desired_hash", type: "text" },
    appliedHash: { column: "d.applied_hash", type: "text" },
    createdAt: { column: "d.created_at", type: "timestamp" },
    updatedAt: { column: "d.updated_at", type: "timestamp" },
    lastConnectedAt: { column: "d.last_connected_at", type: "timestamp" },
    "interfaces.id": interfaceField(sql`e->>'id'`, "text"),
    "interfaces.devId": interfaceField(sql`e->>'devId'`, "text"),
    "interfaces.name": interfaceField(sql`e->>'name'`, "text"),
    "interfaces.type": interfaceField(sql`e->>'type'`, "text"),
    "interfaces.IPv4": interfaceField(sql`e->>'IPv4'`, "text"),
    "interfaces.PublicIP": interfaceField(sql`e->>'PublicIP'`, "text"),
    "interfaces.isAssigned": interfaceField(sql`(e->>'isAssigned')::boolean`, "boolean"),
    "interfaces.isPublicAddressRateLimited": interfaceField(
      sql`coalesce((e->>'isPublicAddressRateLimited')::boolean, false)`,
      "boolean",
    ),
  },
  defaultSort: { key: "name", order: "asc" },
  tiebreaker: "d.id",
};

/** The documented filter and sort keys (route descriptions list them). */
export const DEVICE_LIST_KEYS = Object.keys(DEVICE_LIST.fields);

export type DeviceResponse = "summary" | "detailed" | "ids";

export interface DeviceListInput {
  query: ServerListQuery;
  response: DeviceResponse;
  /** Only these devices (`?ids=`), still filtered, sorted and paged. */
  ids?: readonly string[];
}

export type DeviceListResult =
  | { response: "detailed"; items: Device[]; total: number; next: string | null }
  | { response: "summary"; items: DeviceSummary[]; total: number; next: string | null }
  | { response: "ids"; items: string[]; total: number; next: string | null };

function scoped(ctx: ServiceCtx, ids?: readonly string[]) {
  let base = ctx.db.selectFrom("devices as d").where("d.organization_id", "=", ctx.org.id);
  if (ids) base = base.where("d.id", "=", anyUuid(ids));
  return base;
}

/** The organization's devices, in the requested size. */
export async function listDevices(ctx: ServiceCtx, input: DeviceListInput): Promise<DeviceListResult> {
  const base = scoped(ctx, input.ids);
  // All of the organization's devices: their number is kept (db/row-counts.ts), a filtered one while their version stays.
  const count = {
    total: input.ids ? undefined : rowCount(ctx.org.id, "devices"),
    version: rowVersion(ctx.org.id, "devices"),
  };
  if (input.response === "ids") {
    const { rows, total, next } = await runList(ctx.db, base.select("d.id"), input.query, DEVICE_LIST, count);
    return { response: "ids", items: rows.map((r) => r.id), total, next };
  }
  const pending = pendingNotificationsSql.as("pending_notifications");
  if (input.response === "summary") {
    const query = base.select([
      "d.id",
      "d.name",
      "d.hostname",
      "d.is_approved",
      "d.connection",
      "d.interfaces",
      "d.tags",
      pending,
    ]);
    const { rows, total, next } = await runList(ctx.db, query, input.query, DEVICE_LIST, count);
    return { response: "summary", items: rows.map(toDeviceSummary), total, next };
  }
  const { rows, total, next } = await runList(ctx.db, base.select([...DEVICE_COLUMNS, pending]), input.query, DEVICE_LIST, count);
  return { response: "detailed", items: rows.map(toDevice), total, next };
}

/** One device row of the organization as the API shows it, or null. */
export async function findDeviceRow(db: Db, orgId: string, id: string, lock = false): Promise<DeviceReadRow | null> {
  let query = db
    .selectFrom("devices as d")
    .select([...DEVICE_COLUMNS, pendingNotificationsSql.as("pending_notifications")])
    .where("d.organization_id", "=", orgId)
    .where("d.id", "=", id);
  if (lock) query = query.forUpdate("d");
  return (await query.executeTakeFirst()) ?? null;
}

export async function getDevice(ctx: ServiceCtx, id: string): Promise<Device> {
  const row = await findDeviceRow(ctx.db, ctx.org.id, id);
  if (!row) throw notFound("device");
  return toDevice(row);
}
