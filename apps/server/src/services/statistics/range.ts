/**
 * The range and step of a statistics query, and the storage tier the step
 * picks: the coarsest tier whose bucket is not larger than the step (raw
 * below a minute, 1-minute roll-ups below an hour, 1-hour roll-ups from an
 * hour), provided that tier still holds the start of the range. Values are
 * then re-bucketed to the step. Without a step, the finest allowed one that
 * gives at most DEFAULT_POINTS points.
 */
import { ApiError } from "../../http/errors.ts";
import { BUCKET_ORIGIN } from "./rollup.ts";
import { type StatisticsSettings, TIER_BUCKET_S, type TierName } from "./settings.ts";

export const MAX_POINTS = 10_000;
export const DEFAULT_POINTS = 500;
/** The steps chosen when none is given. */
const AUTO_STEPS = [10, 30, 60, 300, 900, 3600, 6 * 3600, 86_400];
/** A range may end this far after now (clocks differ). */
const FUTURE_SLACK_MS = 5 * 60_000;

export interface RangeQuery {
  from?: string;
  to?: string;
  step?: number;
}

export interface ResolvedRange {
  /** `from` rounded down to the step. */
  from: Date;
  to: Date;
  stepSeconds: number;
  tier: TierName;
}

export interface TierRetention {
  raw: number;
  "1m": number;
  "1h": number;
}

export const deviceRetention = (s: StatisticsSettings): TierRetention => ({
  raw: s.rawRetentionMs,
  "1m": s.minuteRetentionMs,
  "1h": s.hourRetentionMs,
});
/** Tunnels' raw tier is `tunnel_samples`, kept TERN_SAMPLE_RETENTION_DAYS. */
export const tunnelRetention = (s: StatisticsSettings): TierRetention => ({ ...deviceRetention(s), raw: s.tunnelRawRetentionMs });

const rangeInvalid = (path: string, message: string) => new ApiError("STATISTICS_RANGE_INVALID", message, [{ path, message }]);
const stepInvalid = (message: string) => new ApiError("STATISTICS_STEP_INVALID", message, [{ path: "step", message }]);

export function tierForStep(stepSeconds: number): TierName {
  return stepSeconds >= 3600 ? "1h" : stepSeconds >= 60 ? "1m" : "raw";
}

/** Checks a range (default: the `defaultMs` before now) and picks step and tier; throws 400 with a statistics code. */
export function resolveRange(query: RangeQuery, retention: TierRetention, now: Date, defaultMs: number): ResolvedRange {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - defaultMs);
  if (from >= to) throw rangeInvalid("from", "from must be before to");
  if (to.getTime() > now.getTime() + FUTURE_SLACK_MS) throw rangeInvalid("to", "to is in the future");
  const oldest = now.getTime() - retention["1h"];
  if (from.getTime() < oldest)
    throw rangeInvalid("from", `statistics are kept ${Math.round(retention["1h"] / 86_400_000)} days: from is older`);
  const span = to.getTime() - from.getTime();
  const holds = (tier: TierName) => from.getTime() >= now.getTime() - retention[tier];

  let step = query.step;
  if (step === undefined) {
    step = AUTO_STEPS.find((s) => span / 1000 / s <= DEFAULT_POINTS && holds(tierForStep(s))) ?? 86_400;
  } else {
    const tier = tierForStep(step);
    const bucket = TIER_BUCKET_S[tier];
    if (bucket > 0 && step % bucket !== 0) throw stepInvalid(`a step of ${bucket} s or more must be a multiple of ${bucket} s`);
    if (!holds(tier)) {
      const coarser = tier === "raw" ? 60 : 3600;
      throw stepInvalid(`the ${tier} tier no longer holds the start of this range: use a step of ${coarser} s or more`);
    }
    if (span / 1000 / step > MAX_POINTS) throw stepInvalid(`at most ${MAX_POINTS} points: use a larger step`);
  }
  const origin = Date.parse(BUCKET_ORIGIN);
  const stepMs = step * 1000;
  const aligned = origin + Math.floor((from.getTime() - origin) / stepMs) * stepMs;
  return { from: new Date(aligned), to, stepSeconds: step, tier: tierForStep(step) };
}
