/**
 * The life of one condition seen in a stream of reports, without I/O: when a
 * bad observation becomes a raised notification, when a flap counts again,
 * when the all-clear resolves it.
 *
 * - A condition opens after `raiseAfter` bad observations in a row (1 for
 *   smoothed figures against thresholds; the confirm count for up/down states
 *   that blink while a tunnel or session is being set up).
 * - While open: a higher severity raises again at once (escalation). A
 *   notification keeps its highest severity until resolved: no de-escalation,
 *   so a value wandering between warning and critical does not re-alert.
 * - It resolves after `clearAfter` good observations in a row. A bad one
 *   before that is the same problem coming back: raised again (the open row's
 *   `count` goes up), so a flapping tunnel is one notification with a count,
 *   not one per flap.
 * - `hold` (no information: a figure inside its hysteresis band, an RTT of a
 *   tunnel that is down) changes nothing.
 * - With `timing` (figures judged on evidence, evidence.ts), a raise, an
 *   escalation and a resolve each also need the observation to have held for
 *   `sustainMs`: a bad (or higher, or good) streak that started less than
 *   that long ago waits, and a `hold` neither breaks nor starts a streak.
 */
import type { Severity } from "@tern/protocol";

export type Observed = Severity | "ok" | "hold";

export interface ConditionState {
  /** The open notification's severity, or ok when nothing is open. */
  open: Severity | "ok";
  badStreak: number;
  goodStreak: number;
  /** When the current bad / good streak began, and since when a severity above the open one is seen (timing only). */
  badSince?: number;
  goodSince?: number;
  higherSince?: number;
}

/** Sustain an observation for `sustainMs` before it raises, escalates or resolves; `now` in ms. */
export interface Timing {
  now: number;
  sustainMs: number;
}

export type Step = { kind: "raise"; severity: Severity; flap: boolean } | { kind: "resolve" } | null;

const RANK: Record<Severity | "ok", number> = { ok: -1, info: 0, warning: 1, critical: 2 };

export const newCondition = (open: Severity | "ok" = "ok"): ConditionState => ({ open, badStreak: 0, goodStreak: 0 });

export const higher = (a: Severity, b: Severity | "ok"): Severity => (b === "ok" || RANK[a] >= RANK[b] ? a : b);

/** Applies one observation to `state` (mutated) and says what to do. */
export function observe(
  state: ConditionState,
  observed: Observed,
  raiseAfter: number,
  clearAfter: number,
  timing?: Timing,
): Step {
  if (observed === "hold") return null;
  const held = (since: number | undefined) => !timing || (since !== undefined && timing.now - since >= timing.sustainMs);
  if (observed === "ok") {
    state.badStreak = 0;
    state.badSince = undefined;
    state.higherSince = undefined;
    if (state.open === "ok") return null;
    if (state.goodStreak === 0) state.goodSince = timing?.now;
    state.goodStreak++;
    if (state.goodStreak < clearAfter || !held(state.goodSince)) return null;
    state.open = "ok";
    state.goodStreak = 0;
    state.goodSince = undefined;
    return { kind: "resolve" };
  }
  const recovering = state.goodStreak > 0;
  state.goodStreak = 0;
  state.goodSince = undefined;
  if (state.badStreak === 0) state.badSince = timing?.now;
  state.badStreak++;
  if (state.open === "ok") {
    if (state.badStreak < raiseAfter || !held(state.badSince)) return null;
    state.open = observed;
    return { kind: "raise", severity: observed, flap: false };
  }
  if (RANK[observed] > RANK[state.open]) {
    if (state.higherSince === undefined) state.higherSince = timing?.now;
    if (!held(state.higherSince)) return null;
    state.open = observed;
    state.higherSince = undefined;
    return { kind: "raise", severity: observed, flap: false };
  }
  state.higherSince = undefined;
  // On evidence, a good streak too short to resolve did not show recovery: no flap count.
  if (recovering && !timing) return { kind: "raise", severity: state.open, flap: true };
  return null;
}

/** True when the state holds nothing worth keeping in memory. */
export const isIdle = (s: ConditionState) => s.open === "ok" && s.badStreak === 0 && s.goodStreak === 0;

export interface Thresholds {
  warning: number | null;
  critical: number | null;
}

/** A figure must fall this fraction below its lowest threshold to count as clear again. */
export const HYSTERESIS = 0.1;

/**
 * A figure against warning/critical thresholds. Above a threshold: that
 * severity. Below the lowest threshold but within HYSTERESIS of it while a
 * notification is open: `hold`, so a value hovering at the threshold neither
 * resolves nor re-raises. No threshold set: `hold`.
 */
export function thresholdLevel(value: number, t: Thresholds, open: Severity | "ok"): Observed {
  if (t.critical !== null && value >= t.critical) return "critical";
  if (t.warning !== null && value >= t.warning) return "warning";
  const lowest = t.warning ?? t.critical;
  if (lowest === null) return "hold";
  if (open !== "ok" && value >= lowest * (1 - HYSTERESIS)) return "hold";
  return "ok";
}
