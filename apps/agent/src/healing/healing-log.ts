/**
 * What the agent healed by itself, for the server: each action goes out in
 * every `status` for RESEND_MS after it happened (the server keeps one row per
 * id), so a status lost with a dropped link does not lose it.
 */
import { randomUUID } from "node:crypto";
import type { AgentHealingReport, DeviceConfig, HealingMode } from "@tern/protocol";

export const RESEND_MS = 60_000;
const MAX_KEPT = 100;

export type HealingEntry = Omit<AgentHealingReport, "id" | "at" | "suggested">;

/** The mode the applied config asks for (absent section: `act`). */
export const healingMode = (config: DeviceConfig | null): HealingMode => config?.healing?.mode ?? "act";

export class HealingLog {
  private readonly entries: { report: AgentHealingReport; until: number }[] = [];

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Records an action taken (or only suggested). */
  record(entry: HealingEntry, suggested: boolean): AgentHealingReport {
    const report: AgentHealingReport = { id: randomUUID(), at: new Date(this.now()).toISOString(), suggested, ...entry };
    this.entries.push({ report, until: this.now() + RESEND_MS });
    if (this.entries.length > MAX_KEPT) this.entries.splice(0, this.entries.length - MAX_KEPT);
    return report;
  }

  /** Fills in the figures after an action once they are known. */
  complete(id: string, after: AgentHealingReport["after"]): void {
    const e = this.entries.find((x) => x.report.id === id);
    if (e) {
      e.report.after = after;
      e.until = this.now() + RESEND_MS;
    }
  }

  /** The reports to send with the next status. */
  pending(): AgentHealingReport[] {
    const now = this.now();
    return this.entries.filter((e) => e.until >= now).map((e) => e.report);
  }

  /** Every report kept (the troubleshooting page and `status`). */
  recent(): AgentHealingReport[] {
    return this.entries.map((e) => e.report);
  }
}
