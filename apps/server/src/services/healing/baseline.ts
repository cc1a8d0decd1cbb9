/**
 * The learned baseline of one link (pure): for RTT, loss and jitter an
 * exponentially weighted mean and variance (West's incremental form), overall
 * and per hour of day (UTC). A sample is anomalous against the baseline when
 * it is above the mean by at least Z_MIN standard deviations AND by at least
 * the metric's minimum absolute delta: the z-score alone would flag a 0.3 ms
 * wobble on a link whose RTT never moves, the delta alone would ignore what is
 * normal for the link. Only degradation counts (higher figures).
 */

export type Metric = "rtt" | "loss" | "jitter";
export const METRICS: readonly Metric[] = ["rtt", "loss", "jitter"];

export interface Stat {
  /** Samples learned (saturates; only its size versus the warm-up matters). */
  n: number;
  mean: number;
  variance: number;
}

export interface MetricBaseline {
  all: Stat;
  /** By hour of day (UTC, "0"…"23"), filled as samples of that hour come. */
  hours: Record<string, Stat>;
}

export type Baseline = Record<Metric, MetricBaseline>;
export type Figures = Record<Metric, number>;

export interface BaselineOptions {
  /** Weight of a new sample once warmed up (1/alpha ≈ the memory in samples). */
  alpha: number;
  /** Samples before the baseline judges anything. */
  minSamples: number;
  /** Samples an hour's own baseline needs before it is used instead of the overall one. */
  minHourSamples: number;
  /** Standard deviations above the mean that count as anomalous. */
  zMin: number;
  /** Minimum absolute excess per metric (ms, percentage points, ms). */
  minDelta: Figures;
  /** Learning weight of an anomalous sample, relative to alpha: a degradation is not learnt as normal at once. */
  anomalyWeight: number;
}

/** At one status every 5 s, alpha 0.02 remembers about 4 minutes overall; an hour learns from ~720 samples a day. */
export const DEFAULT_BASELINE_OPTIONS: BaselineOptions = {
  alpha: 0.02,
  minSamples: 30,
  minHourSamples: 120,
  zMin: 3,
  minDelta: { rtt: 10, loss: 2, jitter: 5 },
  anomalyWeight: 0.1,
};

const SATURATE = 1_000_000;

export const emptyStat = (): Stat => ({ n: 0, mean: 0, variance: 0 });
export const emptyBaseline = (): Baseline => ({
  rtt: { all: emptyStat(), hours: {} },
  loss: { all: emptyStat(), hours: {} },
  jitter: { all: emptyStat(), hours: {} },
});

/**
 * One sample into a stat. While n < 1/alpha the weight is 1/(n+1), so the
 * first samples form a plain mean and variance instead of being dominated by
 * the zero start; `weight` scales alpha (anomalous samples learn slowly).
 */
export function updateStat(s: Stat, x: number, alpha: number, weight = 1): Stat {
  const out = emptyStat();
  updateStatInto(out, s, x, alpha, weight);
  return out;
}

/** `updateStat` written into `out`, which may be `s` itself: the in-memory link learns without allocating. */
export function updateStatInto(out: Stat, s: Stat, x: number, alpha: number, weight = 1): void {
  const a = Math.max(alpha, 1 / (s.n + 1)) * (s.n === 0 ? 1 : weight);
  const diff = x - s.mean;
  const incr = a * diff;
  const variance = (1 - a) * (s.variance + diff * incr);
  out.n = Math.min(s.n + 1, SATURATE);
  out.mean = s.mean + incr;
  out.variance = variance;
}

/** The stat that judges a sample at `hour`: the hour's own once it has enough samples, else the overall one. */
export function referenceStat(m: MetricBaseline, hour: number, o: BaselineOptions): Stat {
  return referenceOf(m.all, m.hours[String(hour)], o);
}

/** `referenceStat` from the overall stat and the hour's (none: no samples yet). */
export function referenceOf(all: Stat, hour: Stat | undefined, o: BaselineOptions): Stat {
  return hour && hour.n >= o.minHourSamples ? hour : all;
}

export interface MetricJudgement {
  metric: Metric;
  value: number;
  mean: number;
  sd: number;
  z: number;
  anomalous: boolean;
}

/** Judges one figure against a stat (not anomalous while the stat is warming up). */
export function judge(metric: Metric, value: number, s: Stat, o: BaselineOptions): MetricJudgement {
  const sd = Math.sqrt(Math.max(s.variance, 0));
  const delta = value - s.mean;
  // A link whose figure never moved has sd 0: the minimum delta then decides alone.
  const z = sd > 0 ? delta / sd : delta > 0 ? Number.POSITIVE_INFINITY : 0;
  const anomalous = s.n >= o.minSamples && delta >= o.minDelta[metric] && z >= o.zMin;
  return { metric, value, mean: s.mean, sd, z, anomalous };
}

export interface Observation {
  baseline: Baseline;
  judgements: MetricJudgement[];
  anomalous: boolean;
}

/**
 * Judges `figures` (taken at `at`) against the baseline, then learns them:
 * the overall and the hour's stat of each metric are updated, anomalous
 * samples with a reduced weight.
 */
export function observe(
  baseline: Baseline,
  figures: Figures,
  at: Date,
  o: BaselineOptions = DEFAULT_BASELINE_OPTIONS,
): Observation {
  const hour = at.getUTCHours();
  const judgements = METRICS.map((m) => judge(m, figures[m], referenceStat(baseline[m], hour, o), o));
  const anomalous = judgements.some((j) => j.anomalous);
  const weight = anomalous ? o.anomalyWeight : 1;
  const next = {} as Baseline;
  for (const m of METRICS) {
    const b = baseline[m];
    const key = String(hour);
    next[m] = {
      all: updateStat(b.all, figures[m], o.alpha, weight),
      hours: { ...b.hours, [key]: updateStat(b.hours[key] ?? emptyStat(), figures[m], o.alpha, weight) },
    };
  }
  return { baseline: next, judgements, anomalous };
}

/** A stored baseline, or an empty one when the stored value is missing or of another shape. */
export function parseBaseline(value: unknown): Baseline {
  const okStat = (s: unknown): s is Stat =>
    !!s && typeof s === "object" && ["n", "mean", "variance"].every((k) => Number.isFinite((s as Record<string, unknown>)[k]));
  const v = value as Partial<Baseline> | null;
  if (!v || typeof v !== "object") return emptyBaseline();
  for (const m of METRICS) {
    const mb = v[m];
    if (!mb || !okStat(mb.all) || typeof mb.hours !== "object" || !Object.values(mb.hours ?? {}).every(okStat))
      return emptyBaseline();
  }
  return v as Baseline;
}
