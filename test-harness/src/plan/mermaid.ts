/**
 * A lab plan drawn as a Mermaid flowchart: every node a box (clouds round,
 * with their impairment), every veth a line labelled with the interface and
 * its address. docs/lab.md's picture is this output (a test compares them),
 * so the drawing cannot drift from the topology file.
 */
import type { Impairment } from "../topology/schema.ts";
import type { LabPlan, PlanNode } from "./types.ts";

const id = (name: string) => `n_${name.replace(/[^A-Za-z0-9]/g, "_")}`;

function impairmentText(i: Impairment): string {
  const parts: string[] = [];
  if (i.delayMs) parts.push(i.jitterMs ? `${i.delayMs} ± ${i.jitterMs} ms` : `${i.delayMs} ms`);
  if (i.lossPercent) parts.push(`${i.lossPercent} % loss`);
  if (i.rateMbit) parts.push(`${i.rateMbit} Mbit/s`);
  return parts.length ? `<br/>${parts.join(", ")} toward each node` : "";
}

function box(node: PlanNode, plan: LabPlan): string | null {
  switch (node.kind) {
    case "cloud": {
      const first = plan.attachments.find((a) => a.cloud === node.name);
      return `${id(node.name)}((${node.name} cloud${first ? impairmentText(first.impairment) : ""}))`;
    }
    case "edge":
      return `${id(node.name)}[${node.name}<br/>Tern agent]`;
    case "peer": {
      const peer = plan.peers.find((p) => p.node === node.name);
      return `${id(node.name)}[${node.name}<br/>${peer?.kind === "frr" ? "stock FRR" : "stock strongSwan"}]`;
    }
    case "switch":
      return `${id(node.name)}[${node.name}<br/>switch]`;
    case "host": {
      const lan = plan.lanAttachments.find((l) => l.node === node.name);
      return `${id(node.name)}[${node.name}${lan?.address ? "" : "<br/>DHCP client"}]`;
    }
    default:
      // The management node of a lab whose control link crosses a cloud: drawn by its attachment.
      return `${id(node.name)}[${node.name}]`;
  }
}

export function drawPlan(plan: LabPlan): string {
  const lines = ["flowchart LR"];
  for (const node of plan.nodes) {
    const text = box(node, plan);
    if (text) lines.push(`  ${text}`);
  }
  for (const a of plan.lanAttachments) {
    const label = a.address ? `${a.nodeIf} ${a.address}` : a.nodeIf;
    lines.push(`  ${id(a.node)} -- "${label}" --- ${id(a.lan)}`);
  }
  for (const a of plan.attachments) lines.push(`  ${id(a.node)} -- "${a.nodeIf} ${a.address}" --- ${id(a.cloud)}`);
  return `${lines.join("\n")}\n`;
}
