/** `draw <topology.yaml>`: the lab a topology describes, as a Mermaid flowchart on stdout; nothing is built. */
import { planLab } from "../../plan/address-plan.ts";
import { drawPlan } from "../../plan/mermaid.ts";
import { loadTopology } from "../../topology/index.ts";
import type { CliContext } from "../context.ts";

export async function drawCommand(ctx: CliContext, topologyPath: string): Promise<void> {
  const { topology } = await loadTopology(topologyPath);
  // loadTopology has already refused a topology that cannot be planned.
  const { plan } = planLab(topology);
  if (plan) ctx.out(drawPlan(plan).trimEnd());
}
