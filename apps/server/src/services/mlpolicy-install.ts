/**
 * Installing a multi-link policy on many devices at once (and uninstalling
 * it): the selection's rows are locked in id order, one UPDATE sets
 * `devices.mlpolicy_id` and marks them `desired_stale`, one INSERT queues an
 * `mlpolicy` job per changed device, without a target yet; the route
 * answers once that committed and the fan-out recompiler (services/fanout)
 * compiles the devices after the answer. A fan-out to 10,000 devices is a
 * few statements, never a round trip per device, and no compiling before the
 * answer (issue 14: 7.7 s at 10,000 devices when it compiled first).
 */
import { sql } from "kysely";
import { recordAudit } from "./audit.ts";
import { inTransaction, type ServiceCtx } from "./context.ts";
import { anyUuid, lockDevices } from "./desired-config.ts";
import { type DeviceSelection, selectDeviceIds } from "./devices/selection.ts";
import { markStale, queueDeferredJobs } from "./fanout/deferred-jobs.ts";
import { loadMlPolicy, toMlPolicy } from "./mlpolicies.ts";

export interface InstallResult {
  jobIds: string[];
  /** Devices whose policy changed (already running it: not counted). */
  changed: number;
}

const CHUNK = 5000;

async function setPolicy(ctx: ServiceCtx, ids: string[], policyId: string | null, only?: string): Promise<string[]> {
  // In id order first, as every writer of several device rows locks them (the dispatcher too): no deadlock.
  for (let i = 0; i < ids.length; i += CHUNK)
    await lockDevices(ctx.db, ids.slice(i, i + CHUNK))
      .select("id")
      .where("organization_id", "=", ctx.org.id)
      .execute();
  const changed: string[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    let query = ctx.db
      .updateTable("devices")
      .set({ mlpolicy_id: policyId, updated_at: sql`now()`, ...markStale })
      .where("organization_id", "=", ctx.org.id)
      .where("id", "=", anyUuid(ids.slice(i, i + CHUNK)))
      .where(sql<boolean>`mlpolicy_id is distinct from ${policyId}::uuid`);
    if (only) query = query.where("mlpolicy_id", "=", only);
    changed.push(...(await query.returning("id").execute()).map((r) => r.id));
  }
  return changed;
}

/** Makes the selected devices run the policy (replacing another policy they ran). */
export async function installMlPolicy(ctx: ServiceCtx, id: string, selection: DeviceSelection): Promise<InstallResult> {
  return inTransaction(ctx, async (tx) => {
    const policy = toMlPolicy(await loadMlPolicy(tx, id, true));
    const ids = await selectDeviceIds(tx, selection);
    const changed = await setPolicy(tx, ids, id);
    const jobIds = await queueDeferredJobs(tx, {
      deviceIds: changed,
      type: "mlpolicy",
      tasks: [{ kind: "mlpolicy-install", summary: `install multi-link policy ${policy.name}` }],
    });
    await recordAudit(tx, {
      action: "install",
      resource: "mlpolicies",
      resourceId: id,
      after: { policy: policy.name, selected: ids.length, changed: changed.length, jobs: jobIds.length },
    });
    return { jobIds, changed: changed.length };
  });
}

/** Removes the policy from the selected devices that run it (others are left alone). */
export async function uninstallMlPolicy(ctx: ServiceCtx, id: string, selection: DeviceSelection): Promise<InstallResult> {
  return inTransaction(ctx, async (tx) => {
    const policy = toMlPolicy(await loadMlPolicy(tx, id, true));
    const ids = await selectDeviceIds(tx, selection);
    const changed = await setPolicy(tx, ids, null, id);
    const jobIds = await queueDeferredJobs(tx, {
      deviceIds: changed,
      type: "mlpolicy",
      tasks: [{ kind: "mlpolicy-uninstall", summary: `uninstall multi-link policy ${policy.name}` }],
    });
    await recordAudit(tx, {
      action: "uninstall",
      resource: "mlpolicies",
      resourceId: id,
      before: { policy: policy.name, selected: ids.length, changed: changed.length, jobs: jobIds.length },
    });
    return { jobIds, changed: changed.length };
  });
}
