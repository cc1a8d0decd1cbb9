/** Applies attachments' impairments with the backend the lab chose (netem or emulated). */
import type { LabPlan } from "../../plan/types.ts";
import type { Impairment } from "../../topology/schema.ts";
import { applyEmulated, type EmulatedContext } from "./emulated.ts";
import { applyNetem } from "./netem.ts";
import type { ImpairBackend } from "./probe.ts";
import type { AttachmentTarget } from "./types.ts";

export * from "./probe.ts";
export type { AttachmentTarget } from "./types.ts";

/** Applies `live` (attachment id → impairment) to the given clouds (all clouds when omitted). */
export async function applyImpairments(
  plan: LabPlan,
  nsOf: (node: string) => string,
  live: Record<string, Impairment>,
  backend: ImpairBackend,
  ctx: EmulatedContext,
  clouds?: string[],
): Promise<number> {
  const byCloud = new Map<string, AttachmentTarget[]>();
  for (const a of plan.attachments) {
    if (clouds && !clouds.includes(a.cloud)) continue;
    const target = {
      id: a.id,
      cloudNs: nsOf(a.cloud),
      cloudIf: a.cloudIf,
      queue: a.queue,
      impairment: live[a.id] ?? a.impairment,
    };
    byCloud.set(a.cloud, [...(byCloud.get(a.cloud) ?? []), target]);
  }
  let impaired = 0;
  for (const [cloud, targets] of byCloud) {
    if (backend === "netem") await applyNetem(targets);
    else await applyEmulated(nsOf(cloud), targets, ctx);
    impaired += targets.filter((t) => isImpaired(t.impairment)).length;
  }
  return impaired;
}

export function isImpaired(i: Impairment): boolean {
  return i.lossPercent > 0 || i.delayMs > 0 || i.jitterMs > 0 || i.rateMbit !== null;
}

/** "loss 5% delay 30ms ±5ms rate 10Mbit/s", or "none". */
export function formatImpairment(i: Impairment): string {
  const parts: string[] = [];
  if (i.lossPercent > 0) parts.push(`loss ${i.lossPercent}%`);
  if (i.delayMs > 0 || i.jitterMs > 0) parts.push(`delay ${i.delayMs}ms${i.jitterMs > 0 ? ` ±${i.jitterMs}ms` : ""}`);
  if (i.rateMbit !== null) parts.push(`rate ${i.rateMbit}Mbit/s`);
  return parts.length > 0 ? parts.join(" ") : "none";
}
