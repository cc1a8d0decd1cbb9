/**
 * Per-tunnel notification thresholds (`PUT /tunnels/notifications`): round-trip
 * time and drop rate, warning and critical, for the tunnels selected by ids or
 * a filter. Null resets a metric to the organization's notification rules.
 * Stored on the tunnel; the notification engine reads them. No device job: the
 * thresholds are evaluated by the server.
 */
import type { Filter, TunnelThresholds } from "@tern/protocol";
import { sql } from "kysely";
import { toJson } from "../../db/json.ts";
import { ApiError } from "../../http/errors.ts";
import { filterCondition } from "../../http/list-query.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { readsInterfaces, TUNNEL_LIST, tunnelFacts } from "./query.ts";

export interface TunnelNotificationsInput {
  ids?: string[] | undefined;
  filter?: Filter[] | undefined;
  notifications: TunnelThresholds;
}

/** Sets the thresholds on the selected tunnels (ids AND filter when both are given); returns their ids. */
export async function updateTunnelNotifications(ctx: ServiceCtx, input: TunnelNotificationsInput): Promise<{ ids: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const interfaces = readsInterfaces((input.filter ?? []).map((f) => f.key));
    const scope = input.ids ? { ids: input.ids } : {};
    let query = tx.db.selectFrom(tunnelFacts(tx.org.id, scope, { interfaces })).select("f.id");
    (input.filter ?? []).forEach((f, i) => {
      query = query.where(filterCondition(f, TUNNEL_LIST, i));
    });
    const ids = (await query.execute()).map((r) => r.id);
    if (input.ids) {
      const found = new Set(ids);
      const missing = input.filter?.length ? [] : input.ids.filter((id) => !found.has(id));
      if (missing.length)
        throw new ApiError(
          "NOT_FOUND",
          `${missing.length} of the given tunnels not found in this organization`,
          missing.map((id) => ({ path: `ids.${input.ids!.indexOf(id)}`, message: `tunnel ${id} not found` })),
        );
    }
    if (ids.length) {
      await tx.db
        .updateTable("tunnels")
        .set({ notifications: toJson(input.notifications), updated_at: sql`now()` })
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", anyUuid(ids))
        .execute();
    }
    await recordAudit(tx, {
      action: "update-notifications",
      resource: "tunnels",
      resourceId: null,
      after: { tunnels: ids, notifications: input.notifications },
    });
    return { ids };
  });
}
