/** Impairment with netem, where the kernel has it: one root qdisc per impaired cloud interface. */
import { run } from "@tern/netlab";
import type { Impairment } from "../../topology/schema.ts";
import type { AttachmentTarget } from "./types.ts";

/** The `tc qdisc replace … netem …` arguments, or null when the attachment is unimpaired. */
export function netemArgs(i: Impairment): string[] | null {
  if (i.lossPercent === 0 && i.delayMs === 0 && i.jitterMs === 0 && i.rateMbit === null) return null;
  const args = ["limit", "100000"];
  if (i.delayMs > 0 || i.jitterMs > 0) args.push("delay", `${i.delayMs}ms`, ...(i.jitterMs > 0 ? [`${i.jitterMs}ms`] : []));
  if (i.lossPercent > 0) args.push("loss", `${i.lossPercent}%`);
  if (i.rateMbit !== null) args.push("rate", `${i.rateMbit}mbit`);
  return args;
}

export async function applyNetem(targets: AttachmentTarget[]): Promise<void> {
  for (const t of targets) {
    const args = netemArgs(t.impairment);
    const tc = ["ip", "netns", "exec", t.cloudNs, "tc", "qdisc"];
    if (args) await run([...tc, "replace", "dev", t.cloudIf, "root", "netem", ...args]);
    else await run([...tc, "del", "dev", t.cloudIf, "root"], { allowFailure: true });
  }
}
