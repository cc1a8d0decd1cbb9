/**
 * Threshold judgement on evidence (issue 17), for figures from agents that
 * report their probe counts (300 probes a minute by default):
 *
 * - loss: the reported window is a binomial sample, so the judgement uses its
 *   95 % Wilson score interval [lo, hi]. Bad at a threshold when `lo` reaches
 *   it (the loss is above it with 95 % confidence); clear when `hi` is below
 *   the lowest threshold minus the hysteresis margin (HYSTERESIS, 10 %);
 *   anything in between is `hold`.
 * - RTT: the window mean of at least MIN_EVIDENCE_SAMPLES answers (fewer:
 *   `hold`); bad at or above a threshold, clear below the lowest threshold
 *   minus the margin, `hold` in between.
 *
 * Either way the engine raises only after the figure stayed bad for the
 * sustain period, and resolves only after it stayed clear as long
 * (conditions.ts `observe` with timing). Reports without counts (agents
 * before issue 17, 30-probe windows) are judged as before: thresholdLevel,
 * no sustain.
 */
import type { Severity } from "@tern/protocol";
import { HYSTERESIS, type Observed, type Thresholds } from "./conditions.ts";

/** Answered probes an RTT figure needs to be judged on evidence. */
export const MIN_EVIDENCE_SAMPLES = 100;
/** Two-sided 95 % normal quantile. */
const Z = 1.96;

/** 95 % Wilson score interval of a loss of `lossPercent` over `samples` probes, in percent. */
export function wilsonInterval(lossPercent: number, samples: number): { lo: number; hi: number } {
  if (samples <= 0) return { lo: 0, hi: 100 };
  const p = Math.min(1, Math.max(0, lossPercent / 100));
  const z2 = Z * Z;
  const centre = (p + z2 / (2 * samples)) / (1 + z2 / samples);
  const half = (Z / (1 + z2 / samples)) * Math.sqrt((p * (1 - p)) / samples + z2 / (4 * samples * samples)) || 0;
  return { lo: Math.max(0, centre - half) * 100, hi: Math.min(1, centre + half) * 100 };
}

function levelAt(value: number, t: Thresholds): Severity | null {
  if (t.critical !== null && value >= t.critical) return "critical";
  if (t.warning !== null && value >= t.warning) return "warning";
  return null;
}

/** A loss figure with its sample count against thresholds, on evidence (see the file comment). */
export function lossEvidenceLevel(lossPercent: number, samples: number, t: Thresholds): Observed {
  const lowest = t.warning ?? t.critical;
  if (lowest === null) return "hold";
  const { lo, hi } = wilsonInterval(lossPercent, samples);
  const bad = levelAt(lo, t);
  if (bad) return bad;
  return hi < lowest * (1 - HYSTERESIS) ? "ok" : "hold";
}

/** An RTT (window mean of many answers) against thresholds, with the hysteresis band as `hold` whether open or not. */
export function rttEvidenceLevel(rttMs: number, t: Thresholds): Observed {
  const lowest = t.warning ?? t.critical;
  if (lowest === null) return "hold";
  const bad = levelAt(rttMs, t);
  if (bad) return bad;
  return rttMs < lowest * (1 - HYSTERESIS) ? "ok" : "hold";
}
