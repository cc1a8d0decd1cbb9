/**
 * The organization's healing mode (`act`, `suggest`, `off`). Devices learn it
 * through their desired config (`healing.mode`, left out while `act` with
 * nothing avoided), so a change recompiles the organization's devices.
 */
import type { HealingMode, HealingSettings } from "@tern/protocol";
import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { queueConfigJobs } from "../desired-config.ts";

export async function healingModeOf(db: Db, orgId: string): Promise<HealingMode> {
  const row = await db.selectFrom("organizations").select("healing_mode").where("id", "=", orgId).executeTakeFirst();
  return row?.healing_mode ?? "act";
}

export async function getHealingSettings(ctx: ServiceCtx): Promise<HealingSettings> {
  return { mode: await healingModeOf(ctx.db, ctx.org.id) };
}

/** Sets the mode (audited) and queues a config job for every device whose config changes with it. */
export async function updateHealingSettings(
  ctx: ServiceCtx,
  input: HealingSettings,
): Promise<HealingSettings & { jobIds: string[] }> {
  return inTransaction(ctx, async (tx) => {
    const before = await tx.db
      .selectFrom("organizations")
      .select("healing_mode")
      .where("id", "=", tx.org.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (before.healing_mode === input.mode) return { mode: input.mode, jobIds: [] };
    await tx.db
      .updateTable("organizations")
      .set({ healing_mode: input.mode, updated_at: sql`now()` })
      .where("id", "=", tx.org.id)
      .execute();
    await recordAudit(tx, {
      action: "update",
      resource: "organizations",
      resourceId: tx.org.id,
      before: { healingMode: before.healing_mode },
      after: { healingMode: input.mode },
    });
    const devices = await tx.db
      .selectFrom("devices")
      .select("id")
      .where("organization_id", "=", tx.org.id)
      .where("is_approved", "=", true)
      .execute();
    const { jobIds } = await queueConfigJobs(tx, {
      deviceIds: devices.map((d) => d.id),
      type: "modify",
      tasks: [{ kind: "healing-mode", summary: `healing mode ${before.healing_mode} → ${input.mode}` }],
    });
    return { mode: input.mode, jobIds };
  });
}
