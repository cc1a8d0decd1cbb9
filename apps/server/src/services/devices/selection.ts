/**
 * "Which devices": either explicit ids or a filter with the list conventions'
 * ops, for fleet-wide acts such as installing a multi-link policy. Resolved in
 * one query whatever the number of devices.
 */
import { Filter, Id } from "@tern/protocol";
import { sql } from "kysely";
import { z } from "zod";
import { ApiError } from "../../http/errors.ts";
import { filterCondition, type ListSpec } from "../../http/list-query.ts";
import type { ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";

export const MAX_SELECTED_DEVICE_IDS = 10_000;

export const DeviceSelection = z
  .object({
    deviceIds: z.array(Id).min(1).max(MAX_SELECTED_DEVICE_IDS).optional(),
    /** Devices matching every filter; `[]` = every device of the organization. */
    filter: z.array(Filter).max(20).optional(),
  })
  .refine((s) => (s.deviceIds === undefined) !== (s.filter === undefined), {
    message: "give either deviceIds or filter ([] = every device), not both or neither",
    path: ["deviceIds"],
  });
export type DeviceSelection = z.infer<typeof DeviceSelection>;

/** Filter keys of a device selection. */
export const DEVICE_SELECTION_FILTERS: ListSpec = {
  fields: {
    id: { column: "devices.id", type: "uuid" },
    name: { column: "devices.name", type: "text" },
    description: { column: "devices.description", type: "text" },
    hostname: { column: "devices.hostname", type: "text" },
    machineId: { column: "devices.machine_id", type: "text" },
    isApproved: { column: "devices.is_approved", type: "boolean" },
    connection: { column: "devices.connection", type: "text" },
    "policies.multilink": { column: "devices.mlpolicy_id", type: "uuid" },
    "versions.agent": { column: "devices.agent_version", type: "text" },
    createdAt: { column: "devices.created_at", type: "timestamp" },
  },
  defaultSort: { key: "name", order: "asc" },
  tiebreaker: "devices.id",
};
export const DEVICE_SELECTION_KEYS = Object.keys(DEVICE_SELECTION_FILTERS.fields).join(", ");

const MAX_NAMED = 20;

/** The ids of the selected devices of the request's organization; unknown ids are a NOT_FOUND naming them. */
export async function selectDeviceIds(ctx: ServiceCtx, selection: DeviceSelection): Promise<string[]> {
  let query = ctx.db.selectFrom("devices").select("devices.id").where("devices.organization_id", "=", ctx.org.id);
  if (selection.deviceIds) {
    const wanted = [...new Set(selection.deviceIds)];
    const found = new Set((await query.where("devices.id", "=", anyUuid(wanted)).execute()).map((r) => r.id));
    const missing = wanted.filter((id) => !found.has(id));
    if (missing.length) {
      const details = missing.slice(0, MAX_NAMED).map((id) => ({ path: "deviceIds", message: `device ${id} not found` }));
      throw new ApiError("NOT_FOUND", `${missing.length} of the devices were not found in the organization`, details);
    }
    return wanted;
  }
  (selection.filter ?? []).forEach((f, i) => {
    query = query.where(filterCondition(f, DEVICE_SELECTION_FILTERS, i));
  });
  return (await query.orderBy(sql`devices.id`).execute()).map((r) => r.id);
}
