/** Exact latency statistics: every sample is kept (8 bytes each), percentiles by nearest rank. */

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * Nearest-rank percentile of ascending `sorted` values: the smallest value
 * with at least p % of the samples at or below it. NaN for no samples.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0–100, got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[rank - 1]!;
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0)
    return { count: 0, min: Number.NaN, mean: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN };
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: n,
    min: sorted[0]!,
    mean: sum / n,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[n - 1]!,
  };
}

/**
 * How many of `times` (ms) fall in each second after `start`: index i counts
 * [start + i s, start + i + 1 s). A phase's progress over time, where a stall
 * shows as a run of small counts. Times before `start` count in the first
 * second; NaN (never happened) is left out.
 */
export function perSecond(times: ArrayLike<number>, start: number): number[] {
  const counts: number[] = [];
  for (let i = 0; i < times.length; i++) {
    const t = times[i]!;
    if (Number.isNaN(t)) continue;
    const s = Math.max(0, Math.floor((t - start) / 1000));
    while (counts.length <= s) counts.push(0);
    counts[s]!++;
  }
  return counts;
}

/** Collects samples into a growing Float64Array (no per-sample object). */
export class Samples {
  private data = new Float64Array(1024);
  private n = 0;

  add(value: number): void {
    if (this.n === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.n++] = value;
  }

  get count(): number {
    return this.n;
  }

  values(): Float64Array {
    return this.data.subarray(0, this.n);
  }

  summary(): Summary {
    return summarize(this.values());
  }
}

/** Milliseconds between two `process.hrtime.bigint()` readings. */
export function msSince(start: bigint, end: bigint = process.hrtime.bigint()): number {
  return Number(end - start) / 1e6;
}
