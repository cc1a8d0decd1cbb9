/**
 * Deleting tunnels, one or every tunnel matching a filter, in one
 * transaction: one DELETE, audit rows in bulk, and one recompile per affected
 * device whatever the number of tunnels (the reference queued one job per
 * tunnel and was slow at this), which queues that device's `deltunnels` job.
 */
import type { Filter, JobTask } from "@tern/protocol";
import { invalidField, notFound } from "../../http/errors.ts";
import { filterCondition } from "../../http/list-query.ts";
import { recordAuditMany } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid, queueConfigJobs } from "../desired-config.ts";
import { orgTunnelRange, TUNNEL_LIST, type TunnelFactsRow, toTunnel, toTunnelSummary, tunnelFacts } from "./query.ts";

export interface TunnelsDeleted {
  jobIds: string[];
  /** Ids of the deleted tunnels. */
  deleted: string[];
}

function describe(row: TunnelFactsRow): string {
  const name = (ifaceName: string | null, id: string | null) => ifaceName ?? id ?? "";
  const a = `${row.a_name} ${name(row.a_iface_name, row.interface_a)}`;
  return row.peer_id ? `${a} → peer ${row.peer_name}` : `${a} ↔ ${row.b_name} ${name(row.b_iface_name, row.interface_b)}`;
}

async function deleteRows(tx: ServiceCtx, rows: TunnelFactsRow[]): Promise<TunnelsDeleted> {
  if (rows.length === 0) return { jobIds: [], deleted: [] };
  const ids = rows.map((r) => r.id);
  await tx.db.deleteFrom("tunnels").where("organization_id", "=", tx.org.id).where("id", "=", anyUuid(ids)).execute();
  const range = await orgTunnelRange(tx.db, tx.org.id);
  await recordAuditMany(
    tx,
    rows.map((r) => ({
      action: "delete",
      resource: "tunnels",
      resourceId: r.id,
      before: toTunnelSummary(toTunnel(r, tx.org.id, range)),
    })),
  );
  const tasksOf = new Map<string, JobTask[]>();
  for (const r of rows) {
    for (const end of [r.device_a, r.device_b]) {
      if (!end) continue;
      const list = tasksOf.get(end) ?? [];
      list.push({ kind: "remove-tunnel", summary: `tunnel ${r.num}: ${describe(r)}` });
      tasksOf.set(end, list);
    }
  }
  const { jobIds } = await queueConfigJobs(tx, {
    deviceIds: [...tasksOf.keys()],
    type: "deltunnels",
    tasks: (deviceId) => tasksOf.get(deviceId) ?? [],
  });
  return { jobIds, deleted: ids };
}

export async function deleteTunnel(ctx: ServiceCtx, id: string): Promise<TunnelsDeleted> {
  return inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .selectFrom(tunnelFacts(tx.org.id, { ids: [id] }))
      .selectAll()
      .executeTakeFirst();
    if (!row) throw notFound("tunnel");
    return deleteRows(tx, [row as TunnelFactsRow]);
  });
}

/** Deletes every tunnel matching `filter` (the keys of GET /tunnels); an empty filter is refused, not "everything". */
export async function deleteTunnels(ctx: ServiceCtx, filter: readonly Filter[]): Promise<TunnelsDeleted> {
  if (filter.length === 0)
    throw invalidField("filter", 'give a filter; to delete every tunnel say so: [{"key":"num","op":">=","val":0}]');
  return inTransaction(ctx, async (tx) => {
    let query = tx.db.selectFrom(tunnelFacts(tx.org.id)).selectAll();
    filter.forEach((f, i) => {
      query = query.where(filterCondition(f, TUNNEL_LIST, i));
    });
    return deleteRows(tx, (await query.execute()) as TunnelFactsRow[]);
  });
}
