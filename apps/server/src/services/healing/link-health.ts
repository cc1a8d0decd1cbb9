/**
 * When a link is degraded (pure): anomalies against its baseline must last
 * RAISE_AFTER samples in a row before traffic is steered off it, and normal
 * samples must last CLEAR_AFTER in a row before it is taken back, so one odd
 * report neither moves traffic nor ends a detour (hysteresis in time).
 */
import {
  type Baseline,
  type BaselineOptions,
  DEFAULT_BASELINE_OPTIONS,
  emptyBaseline,
  type Figures,
  type MetricJudgement,
  observe,
  parseBaseline,
} from "./baseline.ts";

export const RAISE_AFTER = 3;
export const CLEAR_AFTER = 6;

export interface LinkHealth {
  baseline: Baseline;
  anomalous: number;
  normal: number;
  degraded: boolean;
  /** The figures and baseline means when the link was judged degraded (the action's "before"). */
  degradedWith: Record<string, number> | null;
}

export const newLinkHealth = (): LinkHealth => ({
  baseline: emptyBaseline(),
  anomalous: 0,
  normal: 0,
  degraded: false,
  degradedWith: null,
});

export type LinkEvent =
  | { kind: "degraded"; judgements: MetricJudgement[]; evidence: Record<string, number> }
  | { kind: "recovered"; before: Record<string, number>; evidence: Record<string, number> };

/** Figures and their baseline (mean, sd) as one flat record, the evidence healing actions carry. */
export function evidenceOf(judgements: readonly MetricJudgement[]): Record<string, number> {
  const out: Record<string, number> = {};
  const r = (x: number) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : 0);
  for (const j of judgements) {
    out[j.metric] = r(j.value);
    out[`${j.metric}Baseline`] = r(j.mean);
    out[`${j.metric}Sd`] = r(j.sd);
  }
  return out;
}

/** One sample of a link that is up: learn it, and say whether the link became degraded or recovered. */
export function stepLinkHealth(
  h: LinkHealth,
  figures: Figures,
  at: Date,
  o: BaselineOptions = DEFAULT_BASELINE_OPTIONS,
): { health: LinkHealth; event: LinkEvent | null } {
  const obs = observe(h.baseline, figures, at, o);
  const { anomalous, normal, change } = hysteresis(h, obs.anomalous);
  const event = linkEvent(h, change, obs.judgements);
  return {
    health: {
      baseline: obs.baseline,
      anomalous,
      normal,
      degraded: event ? event.kind === "degraded" : h.degraded,
      degradedWith: event ? (event.kind === "degraded" ? event.evidence : null) : h.degradedWith,
    },
    event,
  };
}

/**
 * The counters after one sample judged anomalous or not, and whether the link thereby became degraded or
 * recovered (the hysteresis in time): shared by `stepLinkHealth` and the in-memory link (HealingLink.step).
 */
export function hysteresis(
  h: Pick<LinkHealth, "anomalous" | "normal" | "degraded">,
  anomalousSample: boolean,
): { anomalous: number; normal: number; change: LinkEvent["kind"] | null } {
  const anomalous = anomalousSample ? h.anomalous + 1 : 0;
  const normal = anomalousSample ? 0 : h.normal + 1;
  const change = !h.degraded && anomalous >= RAISE_AFTER ? "degraded" : h.degraded && normal >= CLEAR_AFTER ? "recovered" : null;
  return { anomalous, normal, change };
}

/** The event of a `change` (null: none), with the evidence of the sample's judgements. */
export function linkEvent(
  h: Pick<LinkHealth, "degradedWith">,
  change: LinkEvent["kind"] | null,
  judgements: MetricJudgement[],
): LinkEvent | null {
  if (change === "degraded") return { kind: "degraded", judgements, evidence: evidenceOf(judgements) };
  if (change === "recovered") return { kind: "recovered", before: h.degradedWith ?? {}, evidence: evidenceOf(judgements) };
  return null;
}

/** A stored state (`healing_baselines.state`), tolerant of missing or older shapes. */
export function parseLinkHealth(value: unknown, rerouting: boolean): LinkHealth {
  const v = (value ?? {}) as Partial<LinkHealth>;
  return {
    baseline: parseBaseline(v.baseline),
    anomalous: Number.isInteger(v.anomalous) ? v.anomalous! : 0,
    normal: Number.isInteger(v.normal) ? v.normal! : 0,
    degraded: rerouting,
    degradedWith: v.degradedWith && typeof v.degradedWith === "object" ? v.degradedWith : null,
  };
}
