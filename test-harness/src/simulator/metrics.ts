/** Turns a `TunnelMetricsInput` into the figures a tunnel reports at a moment. */
import { DEFAULT_METRICS, type TunnelMetricsInput, type TunnelMetricsScript, type TunnelSample } from "./types.ts";

function isScript(input: TunnelMetricsInput): input is TunnelMetricsScript {
  return typeof input === "object" && input !== null && "steps" in input;
}

/** The step of a script in force `elapsedMs` after it was set. */
function scriptStep(script: TunnelMetricsScript, elapsedMs: number): Partial<TunnelSample> {
  const steps = script.steps;
  if (steps.length === 0) return {};
  let t = elapsedMs;
  const last = steps[steps.length - 1]!;
  if (script.loopMs !== undefined && script.loopMs > 0) {
    const period = last.atMs + script.loopMs;
    t = elapsedMs % period;
  }
  let current: Partial<TunnelSample> = {};
  for (const step of steps) {
    if (step.atMs > t) break;
    current = step.metrics;
  }
  return current;
}

/** Figures of `tunnelId` at `elapsedMs` after `input` was set; missing fields come from the defaults. */
export function resolveMetrics(input: TunnelMetricsInput, tunnelId: string, elapsedMs: number): TunnelSample {
  const partial =
    typeof input === "function" ? input(tunnelId, elapsedMs) : isScript(input) ? scriptStep(input, elapsedMs) : input;
  const sample = { ...DEFAULT_METRICS, ...partial };
  // A down tunnel loses everything and has no round trip to measure, as the agent reports it.
  const counts = sample.counts ? { counts: sample.counts } : {};
  if (!sample.up) return { up: false, loss: 100, rtt: 0, jitter: 0, ...counts };
  return {
    up: true,
    loss: clamp(sample.loss, 0, 100),
    rtt: Math.max(0, sample.rtt),
    jitter: Math.max(0, sample.jitter),
    ...counts,
  };
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/** Checks a metrics input early so a typo fails at the call, not in the next status message. */
export function validateMetrics(input: TunnelMetricsInput): void {
  if (typeof input === "function") return;
  const parts = isScript(input) ? input.steps.map((s) => s.metrics) : [input];
  if (isScript(input)) {
    let prev = -1;
    for (const step of input.steps) {
      if (!(step.atMs >= 0) || step.atMs < prev) throw new RangeError("metrics script steps need ascending atMs >= 0");
      prev = step.atMs;
    }
  }
  for (const part of parts) {
    for (const key of ["loss", "rtt", "jitter"] as const) {
      const v = part[key];
      if (v !== undefined && !(Number.isFinite(v) && v >= 0))
        throw new RangeError(`tunnel ${key} must be a number >= 0, got ${v}`);
    }
    if (part.loss !== undefined && part.loss > 100) throw new RangeError(`tunnel loss must be at most 100, got ${part.loss}`);
  }
}
