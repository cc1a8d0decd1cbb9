/**
 * One link's healing state as the monitor holds it in memory, for as long as
 * the device's link lasts: the overall statistics of RTT, loss and jitter and
 * those of the current hour only, as plain number fields. The other hours of
 * the day stay in `healing_baselines` (written with `mergeStoredState`, which
 * keeps the hours not in memory) and the hour's own statistics come back from
 * there when the hour turns (`HealingMonitor`).
 *
 * Held as the stored shape (`Baseline`: objects per metric and a record of up
 * to 24 hours), a link took 1.4 KB of heap an hour into the day and 7.5 KB
 * once every hour had samples (measured over 20,000 links): about 250 MB
 * more after a day at 10,000 devices with four links each. Here a link is
 * one small object of fixed size, and its 18 statistics numbers are a slot of
 * a shared Float64Array (`StatSlots`): as fields of their own each was a boxed
 * heap number, 24 bytes with its field instead of 8.
 * `step()` judges and learns one sample on these fields, with the pure
 * functions' arithmetic (`judge`, `updateStatInto`, `hysteresis`) and without
 * building the stored shape: stepping through `health()` and `learn()` made
 * about 50 objects a link and sample, 300 for a status of four tunnels and
 * two WAN links. `stepLinkHealth` on the stored shape is its reference
 * (healing-link.test.ts checks that both agree).
 */
import { sql } from "kysely";
import {
  type Baseline,
  type BaselineOptions,
  DEFAULT_BASELINE_OPTIONS,
  type Figures,
  judge,
  METRICS,
  type Metric,
  type MetricJudgement,
  referenceOf,
  type Stat,
  updateStatInto,
} from "../../services/healing/baseline.ts";
import { hysteresis, type LinkEvent, type LinkHealth, linkEvent, parseLinkHealth } from "../../services/healing/link-health.ts";

/** The tunnel a link key names (`tunnel:<id>`), null for a WAN link (`wan:<name>`). */
export const tunnelIdOf = (key: string): string | null => (key.startsWith("tunnel:") ? key.slice(7) : null);

/** Scratch statistics `step()` reads a field triple into and writes it back from (one link steps at a time). */
const overall: Stat = { n: 0, mean: 0, variance: 0 };
const ofHour: Stat = { n: 0, mean: 0, variance: 0 };

/** Where a metric's numbers start in a link's slot: its overall n, mean, variance, then its hour's. */
const METRIC_AT: Record<Metric, number> = { rtt: 0, loss: 6, jitter: 12 };
/** Numbers in a link's slot. */
const SLOT_SIZE = 18;

/**
 * The links' statistics, SLOT_SIZE numbers a link, in Float64Array chunks shared by every link. A link's slot is
 * given back when the link is collected (FinalizationRegistry: nothing else holds a link once its device's link
 * state is gone) and handed, zeroed, to a later link. Chunks are kept once made: the most links held at once.
 */
export class StatSlots {
  private readonly chunks: Float64Array[] = [];
  private readonly free: number[] = [];
  private made = 0;
  private readonly registry = new FinalizationRegistry<number>((slot) => this.free.push(slot));

  constructor(private readonly perChunk = 1024) {}

  /** A zeroed slot for `owner`, given back when `owner` is collected: its chunk and where it starts. */
  take(owner: object): { chunk: Float64Array; at: number } {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.made++;
      if (slot % this.perChunk === 0) this.chunks.push(new Float64Array(this.perChunk * SLOT_SIZE));
    }
    const chunk = this.chunks[Math.floor(slot / this.perChunk)]!;
    const at = (slot % this.perChunk) * SLOT_SIZE;
    chunk.fill(0, at, at + SLOT_SIZE);
    this.registry.register(owner, slot);
    return { chunk, at };
  }

  /** Slots in use or waiting to be reused, and slots free (for tests and figures). */
  get counts(): { made: number; free: number } {
    return { made: this.made, free: this.free.length };
  }
}

/** The slots of every link of this process. */
export const linkStatSlots = new StatSlots();

/** The stored state of a link (`healing_baselines.state`). */
export type StoredLinkState = LinkHealth & { openActionId: string | null; tunnelId: string | null };

export class HealingLink {
  openActionId: string | null;
  anomalous: number;
  normal: number;
  degraded: boolean;
  degradedWith: Record<string, number> | null;
  /** The hour of day (UTC) the hour fields are of. */
  hour: number;
  /**
   * Whether the hour fields started from the stored statistics of that hour
   * (or it has none): until then they are not written back, so that a few
   * samples learnt while the stored ones are read do not replace them.
   */
  hourKnown: boolean;
  /** Learnt anything since it was last written. */
  dirty = false;
  /** The chunk holding this link's statistics, and where they start in it (METRIC_AT). */
  private readonly v: Float64Array;
  private readonly at: number;

  constructor(hour: number, health?: LinkHealth, openActionId: string | null = null, slots: StatSlots = linkStatSlots) {
    const { chunk, at } = slots.take(this);
    this.v = chunk;
    this.at = at;
    this.openActionId = openActionId;
    this.anomalous = health?.anomalous ?? 0;
    this.normal = health?.normal ?? 0;
    this.degraded = health?.degraded ?? false;
    this.degradedWith = health?.degradedWith ?? null;
    this.hour = hour;
    this.hourKnown = true;
    if (health) this.setBaseline(health.baseline, hour);
  }

  /** A link from its stored state (`healing_baselines`), at `hour`. */
  static fromStored(state: unknown, rerouting: boolean, hour: number): HealingLink {
    const stored = (state ?? {}) as Partial<StoredLinkState>;
    return new HealingLink(
      hour,
      parseLinkHealth(state, rerouting),
      typeof stored.openActionId === "string" ? stored.openActionId : null,
    );
  }

  /** The state in the shape the pure functions judge and learn on (overall and the current hour). */
  health(): LinkHealth {
    const h = String(this.hour);
    const { v } = this;
    const metric = (m: Metric) => {
      const b = this.at + METRIC_AT[m];
      return {
        all: { n: v[b]!, mean: v[b + 1]!, variance: v[b + 2]! },
        hours: v[b + 3]! > 0 ? { [h]: { n: v[b + 3]!, mean: v[b + 4]!, variance: v[b + 5]! } } : {},
      };
    };
    return {
      baseline: { rtt: metric("rtt"), loss: metric("loss"), jitter: metric("jitter") },
      anomalous: this.anomalous,
      normal: this.normal,
      degraded: this.degraded,
      degradedWith: this.degradedWith,
    };
  }

  /**
   * One sample of the link while it is up, taken at `at` (in this link's hour: turn it first), judged against
   * its baseline and learnt: what `stepLinkHealth(health(), figures, at)` computes, kept in the fields
   * without the objects. Returns the event when the link became degraded or recovered.
   */
  step(figures: Figures, at: Date, o: BaselineOptions = DEFAULT_BASELINE_OPTIONS): LinkEvent | null {
    if (at.getUTCHours() !== this.hour) throw new Error(`sample of hour ${at.getUTCHours()} stepped at hour ${this.hour}`);
    const judgements: MetricJudgement[] = [];
    let anomalous = false;
    for (const m of METRICS) {
      this.read(m, overall, ofHour);
      const j = judge(m, figures[m], referenceOf(overall, ofHour, o), o);
      anomalous ||= j.anomalous;
      judgements.push(j);
    }
    const weight = anomalous ? o.anomalyWeight : 1;
    for (const m of METRICS) {
      this.read(m, overall, ofHour);
      updateStatInto(overall, overall, figures[m], o.alpha, weight);
      updateStatInto(ofHour, ofHour, figures[m], o.alpha, weight);
      this.write(m, overall, ofHour);
    }
    const next = hysteresis(this, anomalous);
    const event = linkEvent(this, next.change, judgements);
    this.anomalous = next.anomalous;
    this.normal = next.normal;
    if (event) {
      this.degraded = event.kind === "degraded";
      this.degradedWith = event.kind === "degraded" ? event.evidence : null;
    }
    return event;
  }

  /** The overall and the hour's statistics of `m` into the two scratch stats. */
  private read(m: Metric, all: Stat, hour: Stat): void {
    const { v } = this;
    const b = this.at + METRIC_AT[m];
    all.n = v[b]!;
    all.mean = v[b + 1]!;
    all.variance = v[b + 2]!;
    hour.n = v[b + 3]!;
    hour.mean = v[b + 4]!;
    hour.variance = v[b + 5]!;
  }

  /** The overall statistics of `m` and (none: empty) those of the link's hour. */
  private write(m: Metric, all: Stat, hour: Stat | undefined): void {
    const { v } = this;
    const b = this.at + METRIC_AT[m];
    v[b] = all.n;
    v[b + 1] = all.mean;
    v[b + 2] = all.variance;
    this.setHourStat(m, hour);
  }

  /** A new hour: its statistics start empty until the stored ones are read (`setHour`). */
  turnTo(hour: number): void {
    this.hour = hour;
    this.hourKnown = false;
    this.setHourStat("rtt", undefined);
    this.setHourStat("loss", undefined);
    this.setHourStat("jitter", undefined);
  }

  /** The stored statistics of the current hour (none: the hour has no samples yet). */
  setHour(stats: Partial<Record<Metric, Stat>>): void {
    for (const m of ["rtt", "loss", "jitter"] as const) {
      const s = stats[m];
      if (s && Number.isFinite(s.n) && Number.isFinite(s.mean) && Number.isFinite(s.variance) && s.n > 0) this.setHourStat(m, s);
    }
    this.hourKnown = true;
  }

  /**
   * The state to store for the link `key` (`tunnel:<id>` or `wan:<name>`): the current hour's statistics only,
   * once known (`mergeStoredState` keeps the others).
   */
  stored(key: string): StoredLinkState {
    const health = this.health();
    if (!this.hourKnown) for (const m of ["rtt", "loss", "jitter"] as const) health.baseline[m].hours = {};
    return { ...health, openActionId: this.openActionId, tunnelId: tunnelIdOf(key) };
  }

  private setBaseline(b: Baseline, hour: number): void {
    const h = String(hour);
    for (const m of METRICS) this.write(m, b[m].all, b[m].hours[h]);
  }

  private setHourStat(m: Metric, s: Stat | undefined): void {
    const { v } = this;
    const b = this.at + METRIC_AT[m] + 3;
    v[b] = s?.n ?? 0;
    v[b + 1] = s?.mean ?? 0;
    v[b + 2] = s?.variance ?? 0;
  }
}

/**
 * The value an upsert of `healing_baselines` writes: the new state, whose
 * baseline carries the current hour only, with the stored hours of each
 * metric kept (`healing_baselines.state` is the row's, `excluded.state` the
 * new one).
 */
export function mergeStoredState() {
  const hours = (m: Metric) =>
    sql`coalesce(case when jsonb_typeof(healing_baselines.state -> 'baseline' -> ${sql.lit(m)} -> 'hours') = 'object'
          then healing_baselines.state -> 'baseline' -> ${sql.lit(m)} -> 'hours' end, '{}'::jsonb)
        || coalesce(excluded.state -> 'baseline' -> ${sql.lit(m)} -> 'hours', '{}'::jsonb)`;
  const metric = (m: Metric) =>
    sql`jsonb_build_object('all', excluded.state -> 'baseline' -> ${sql.lit(m)} -> 'all', 'hours', ${hours(m)})`;
  return sql<string>`excluded.state || jsonb_build_object('baseline', jsonb_build_object(
    'rtt', ${metric("rtt")}, 'loss', ${metric("loss")}, 'jitter', ${metric("jitter")}))`;
}
