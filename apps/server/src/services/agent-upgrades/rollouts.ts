/**
 * Agent rollouts of an organization: which devices get which package, in what order (canaries first, then
 * batches), and each device's outcome. The schedule itself is rollout-duty.ts; this file holds what the API does.
 */
import { randomUUID } from "node:crypto";
import {
  type Rollout,
  type RolloutCreate,
  type RolloutDevice,
  RolloutDeviceState,
  type RolloutReport,
  type RolloutState,
} from "@tern/protocol";
import { sql } from "kysely";
import { ApiError, notFound } from "../../http/errors.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { anyUuid } from "../desired-config.ts";
import { selectDeviceIds } from "../devices/selection.ts";
import { agentPackageOf } from "./packages.ts";
import { planBatches } from "./plan.ts";

type RolloutRow = {
  id: string;
  organization_id: string;
  package_id: string;
  version: string;
  state: RolloutState;
  paused_reason: string | null;
  window_start: string | null;
  window_end: string | null;
  canary_percent: number;
  batch_size: number;
  health_timeout_sec: number;
  created_by: string;
  created_at: Date;
};

const ROLLOUT_COLUMNS = [
  "id",
  "organization_id",
  "package_id",
  "version",
  "state",
  "paused_reason",
  "window_start",
  "window_end",
  "canary_percent",
  "batch_size",
  "health_timeout_sec",
  "created_by",
  "created_at",
] as const;

function toRollout(r: RolloutRow, counts: Partial<Record<RolloutDeviceState, number>>): Rollout {
  return {
    id: r.id,
    org: r.organization_id,
    package: r.package_id,
    version: r.version,
    state: r.state,
    pausedReason: r.paused_reason,
    window: r.window_start && r.window_end ? { start: r.window_start, end: r.window_end } : null,
    canaryPercent: r.canary_percent,
    batchSize: r.batch_size,
    healthTimeoutSec: r.health_timeout_sec,
    createdBy: r.created_by,
    createdAt: r.created_at.toISOString(),
    counts: Object.fromEntries(RolloutDeviceState.options.map((s) => [s, counts[s] ?? 0])) as Rollout["counts"],
  };
}

async function countsOf(ctx: Pick<ServiceCtx, "db">, ids: string[]) {
  const out = new Map<string, Partial<Record<RolloutDeviceState, number>>>();
  if (ids.length === 0) return out;
  const rows = await ctx.db
    .selectFrom("agent_rollout_devices")
    .select(["rollout_id", "state", sql<number>`count(*)::int`.as("n")])
    .where("rollout_id", "=", anyUuid(ids))
    .groupBy(["rollout_id", "state"])
    .execute();
  for (const r of rows) {
    const c = out.get(r.rollout_id) ?? {};
    c[r.state] = Number(r.n);
    out.set(r.rollout_id, c);
  }
  return out;
}

/** Creates a rollout: devices already on the version are `skipped`, the others planned canaries first. */
export async function createRollout(ctx: ServiceCtx, input: RolloutCreate): Promise<Rollout> {
  return inTransaction(ctx, async (tx) => {
    const pkg = await agentPackageOf(tx, input.package);
    const ids = await selectDeviceIds(
      tx,
      input.target.deviceIds ? { deviceIds: input.target.deviceIds } : { filter: input.target.filter ?? [] },
    );
    if (ids.length === 0)
      throw new ApiError("VALIDATION_FAILED", "the target selects no device", [{ path: "target", message: "no device" }]);
    const devices = await tx.db
      .selectFrom("devices")
      .select(["id", "name", "agent_version"])
      .where("id", "=", anyUuid(ids))
      .orderBy("id")
      .execute();
    const toUpgrade = devices.filter((d) => d.agent_version !== pkg.version);
    const plan = planBatches(
      toUpgrade.map((d) => d.id),
      input.canaryPercent,
      input.batchSize,
    );
    const row = await tx.db
      .insertInto("agent_rollouts")
      .values({
        id: randomUUID(),
        organization_id: tx.org.id,
        package_id: pkg.id,
        version: pkg.version,
        state: toUpgrade.length === 0 ? "complete" : "running",
        window_start: input.window?.start ?? null,
        window_end: input.window?.end ?? null,
        canary_percent: input.canaryPercent,
        batch_size: input.batchSize,
        health_timeout_sec: input.healthTimeoutSec,
        created_by: tx.actor.label,
      })
      .returning(ROLLOUT_COLUMNS)
      .executeTakeFirstOrThrow();
    await tx.db
      .insertInto("agent_rollout_devices")
      .values(
        devices.map((d) => {
          const planned = plan.get(d.id);
          return {
            id: randomUUID(),
            rollout_id: row.id,
            organization_id: tx.org.id,
            device_id: d.id,
            device_name: d.name,
            canary: planned?.canary ?? false,
            batch: planned?.batch ?? 0,
            state: planned ? ("pending" as const) : ("skipped" as const),
            from_version: d.agent_version,
            detail: planned ? null : `already runs ${pkg.version}`,
          };
        }),
      )
      .execute();
    await recordAudit(tx, {
      action: "agent_rollout_created",
      resource: "devices",
      resourceId: row.id,
      after: { version: pkg.version, devices: devices.length, canaryPercent: input.canaryPercent, batchSize: input.batchSize },
    });
    return toRollout(row, (await countsOf(tx, [row.id])).get(row.id) ?? {});
  });
}

export async function listRollouts(ctx: ServiceCtx): Promise<Rollout[]> {
  const rows = await ctx.db
    .selectFrom("agent_rollouts")
    .select(ROLLOUT_COLUMNS)
    .where("organization_id", "=", ctx.org.id)
    .orderBy("created_at", "desc")
    .limit(500)
    .execute();
  const counts = await countsOf(
    ctx,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toRollout(r, counts.get(r.id) ?? {}));
}

async function rolloutOf(ctx: Pick<ServiceCtx, "db" | "org">, id: string, lock = false): Promise<RolloutRow> {
  let q = ctx.db
    .selectFrom("agent_rollouts")
    .select(ROLLOUT_COLUMNS)
    .where("id", "=", id)
    .where("organization_id", "=", ctx.org.id);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw notFound("rollout");
  return row;
}

/** The rollout with every device's outcome (upgraded, rolled back, failed, skipped …). */
export async function rolloutReport(ctx: ServiceCtx, id: string): Promise<RolloutReport> {
  const row = await rolloutOf(ctx, id);
  const devices = await ctx.db
    .selectFrom("agent_rollout_devices")
    .select(["device_id", "device_name", "canary", "batch", "state", "from_version", "detail", "started_at", "finished_at"])
    .where("rollout_id", "=", id)
    .orderBy("batch")
    .orderBy("device_name")
    .execute();
  return {
    ...toRollout(row, (await countsOf(ctx, [id])).get(id) ?? {}),
    devices: devices.map(
      (d): RolloutDevice => ({
        device: d.device_id,
        name: d.device_name,
        canary: d.canary,
        batch: d.batch,
        state: d.state,
        fromVersion: d.from_version,
        detail: d.detail,
        startedAt: d.started_at ? d.started_at.toISOString() : null,
        finishedAt: d.finished_at ? d.finished_at.toISOString() : null,
      }),
    ),
  };
}

const TRANSITIONS: Record<"pause" | "resume" | "cancel", { from: RolloutState[]; to: RolloutState }> = {
  pause: { from: ["running"], to: "paused" },
  resume: { from: ["paused"], to: "running" },
  cancel: { from: ["running", "paused"], to: "cancelled" },
};

/**
 * Pauses, resumes or cancels a rollout (ROLLOUT_CONFLICT from another state). Devices already sent the package
 * finish their upgrade (or roll back) on their own; a cancel marks the devices not yet started `skipped`.
 */
export async function changeRollout(ctx: ServiceCtx, id: string, act: "pause" | "resume" | "cancel"): Promise<Rollout> {
  return inTransaction(ctx, async (tx) => {
    const row = await rolloutOf(tx, id, true);
    const { from, to } = TRANSITIONS[act];
    if (!from.includes(row.state)) throw new ApiError("ROLLOUT_CONFLICT", `a ${row.state} rollout cannot ${act}`);
    const updated = await tx.db
      .updateTable("agent_rollouts")
      .set({ state: to, paused_reason: act === "pause" ? `paused by ${tx.actor.label}` : null, updated_at: sql`now()` })
      .where("id", "=", id)
      .returning(ROLLOUT_COLUMNS)
      .executeTakeFirstOrThrow();
    if (act === "cancel")
      await tx.db
        .updateTable("agent_rollout_devices")
        .set({ state: "skipped", detail: "rollout cancelled", finished_at: sql`now()` })
        .where("rollout_id", "=", id)
        .where("state", "=", "pending")
        .execute();
    await recordAudit(tx, {
      action: `agent_rollout_${act}`,
      resource: "devices",
      resourceId: id,
      before: { state: row.state },
      after: { state: to },
    });
    return toRollout(updated, (await countsOf(tx, [id])).get(id) ?? {});
  });
}

/** Which devices of the organization run which agent version. */
export async function agentVersions(ctx: ServiceCtx) {
  const rows = await ctx.db
    .selectFrom("devices")
    .select([
      "agent_version",
      sql<number>`count(*)::int`.as("devices"),
      sql<number>`count(*) filter (where connection = 'connected')::int`.as("connected"),
    ])
    .where("organization_id", "=", ctx.org.id)
    .groupBy("agent_version")
    .orderBy("agent_version")
    .execute();
  return rows.map((r) => ({ version: r.agent_version, devices: Number(r.devices), connected: Number(r.connected) }));
}
