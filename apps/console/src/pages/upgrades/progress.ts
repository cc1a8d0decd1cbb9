/**
 * A rollout's progress from its counts per device state (the API's `counts`):
 * the figures the list and the report show, and the bar's sections in a fixed
 * order (finished first, then in flight, then waiting).
 */
import type { Schemas } from "@tern/client";
import { tone } from "../../components/tones.ts";

export type Rollout = Schemas["AgentRollout"];
export type RolloutDeviceState = Schemas["AgentRolloutReport"]["devices"][number]["state"];

/** Every device state, in the bar's order, with its tone. Compile-checked to be complete. */
export const DEVICE_STATES = [
  { state: "upgraded", color: tone.ok },
  { state: "rolled-back", color: tone.bad },
  { state: "failed", color: tone.bad },
  { state: "skipped", color: tone.muted },
  { state: "sending", color: tone.info },
  { state: "installing", color: tone.info },
  // Waiting: the bar's empty track.
  { state: "pending", color: "transparent" },
] as const satisfies readonly { state: RolloutDeviceState; color: string }[];
const everyState: Exclude<RolloutDeviceState, (typeof DEVICE_STATES)[number]["state"]> extends never ? true : never = true;
void everyState;

const FINISHED: ReadonlySet<RolloutDeviceState> = new Set(["upgraded", "rolled-back", "failed", "skipped"]);

export interface Progress {
  total: number;
  /** Devices whose upgrade ended one way or another (upgraded, rolled back, failed, skipped). */
  finished: number;
  /** Whole percent of the devices finished. */
  percent: number;
  /** The bar's sections: states with at least one device, with their share of the bar in percent. */
  sections: { state: RolloutDeviceState; count: number; percent: number; color: string }[];
  /** "2 upgraded, 1 failed, 7 pending": the non-zero states in the bar's order. */
  summary: string;
}

export function rolloutProgress(counts: Partial<Record<RolloutDeviceState, number>>): Progress {
  const sections = DEVICE_STATES.map(({ state, color }) => ({ state, color, count: counts[state] ?? 0 })).filter(
    (s) => s.count > 0,
  );
  const total = sections.reduce((n, s) => n + s.count, 0);
  const finished = sections.filter((s) => FINISHED.has(s.state)).reduce((n, s) => n + s.count, 0);
  return {
    total,
    finished,
    percent: total === 0 ? 0 : Math.floor((finished * 100) / total),
    sections: sections.map((s) => ({ ...s, percent: total === 0 ? 0 : (s.count * 100) / total })),
    summary: sections.length === 0 ? "no devices" : sections.map((s) => `${s.count} ${s.state}`).join(", "),
  };
}
