/** The learned baseline and its anomaly rule (pure), with properties checked by fast-check. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  emptyBaseline,
  emptyStat,
  type Figures,
  judge,
  DEFAULT_BASELINE_OPTIONS as O,
  observe,
  parseBaseline,
  referenceStat,
  updateStat,
} from "./baseline.ts";

const feed = (values: readonly number[], alpha = O.alpha) => values.reduce((s, x) => updateStat(s, x, alpha), emptyStat());
const at = (hour: number) => new Date(Date.UTC(2026, 10, 25, hour, 0, 0));

describe("EWMA mean and variance", () => {
  it("the first samples form a plain mean and (population) variance", () => {
    const s = feed([10, 20, 30]);
    expect(s.mean).toBeCloseTo(20, 9);
    expect(s.variance).toBeCloseTo(200 / 3, 9);
  });

  it("property: a constant input has that mean and no variance", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1000, noNaN: true }), fc.integer({ min: 1, max: 300 }), (x, n) => {
        const s = feed(Array(n).fill(x));
        expect(s.mean).toBeCloseTo(x, 6);
        expect(s.variance).toBeCloseTo(0, 6);
      }),
    );
  });

  it("property: the mean stays within the range of the input and the variance is never negative", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { minLength: 1, maxLength: 200 }), (xs) => {
        const s = feed(xs);
        expect(s.mean).toBeGreaterThanOrEqual(Math.min(...xs) - 1e-6);
        expect(s.mean).toBeLessThanOrEqual(Math.max(...xs) + 1e-6);
        expect(s.variance).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it("forgets: after a level shift the mean follows within a few times 1/alpha samples", () => {
    const s = feed([...Array(500).fill(10), ...Array(250).fill(50)]);
    expect(s.mean).toBeGreaterThan(49);
  });
});

describe("anomaly rule: z-score and a minimum absolute delta", () => {
  const noisy = (mean: number, spread: number, n: number) =>
    Array.from({ length: n }, (_, i) => mean + spread * Math.sin(i * 1.7));

  it("a jump of many standard deviations but less than the minimum delta is not an anomaly", () => {
    const s = feed(noisy(2, 0.05, 200));
    const j = judge("rtt", 4, s, O);
    expect(j.z).toBeGreaterThan(10);
    expect(j.anomalous).toBe(false);
  });

  it("a jump above the minimum delta that is within the link's usual spread is not an anomaly", () => {
    const s = feed(noisy(80, 30, 300));
    const j = judge("rtt", 80 + 25, s, O);
    expect(j.anomalous).toBe(false);
  });

  it("a jump above both is an anomaly; lower figures never are", () => {
    const s = feed(noisy(20, 1, 200));
    expect(judge("rtt", 50, s, O)).toMatchObject({ anomalous: true });
    expect(judge("rtt", 0, s, O).anomalous).toBe(false);
  });

  it("judges nothing while warming up", () => {
    const s = feed(noisy(20, 1, O.minSamples - 1));
    expect(judge("rtt", 500, s, O).anomalous).toBe(false);
  });

  it("property: a figure at or below the mean is never anomalous", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 500, noNaN: true }), { minLength: O.minSamples, maxLength: 100 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (xs, f) => {
          const s = feed(xs);
          expect(judge("loss", s.mean * f, s, O).anomalous).toBe(false);
        },
      ),
    );
  });
});

describe("by hour of day", () => {
  it("uses an hour's own baseline once it has enough samples: high RTT every evening is normal then, not in the morning", () => {
    let b = emptyBaseline();
    // A week of mornings at 10 ms and evenings at 60 ms.
    for (let day = 0; day < 2; day++)
      for (let i = 0; i < O.minHourSamples; i++) {
        b = observe(b, { rtt: 10 + (i % 3), loss: 0, jitter: 1 }, at(9), O).baseline;
        b = observe(b, { rtt: 60 + (i % 3), loss: 0, jitter: 1 }, at(20), O).baseline;
      }
    const evening: Figures = { rtt: 62, loss: 0, jitter: 1 };
    expect(observe(b, evening, at(20), O).anomalous).toBe(false);
    expect(observe(b, evening, at(9), O).anomalous).toBe(true);
    // An hour without enough samples falls back to the overall baseline.
    expect(referenceStat(b.rtt, 3, O)).toBe(b.rtt.all);
  });

  it("anomalous samples are learnt with a reduced weight", () => {
    let b = emptyBaseline();
    for (let i = 0; i < 100; i++) b = observe(b, { rtt: 10 + (i % 2), loss: 0, jitter: 1 }, at(9), O).baseline;
    const before = b.rtt.all.mean;
    const o = observe(b, { rtt: 200, loss: 0, jitter: 1 }, at(9), O);
    expect(o.anomalous).toBe(true);
    expect(o.baseline.rtt.all.mean - before).toBeCloseTo((200 - before) * O.alpha * O.anomalyWeight, 6);
  });
});

describe("parseBaseline", () => {
  it("round-trips a baseline through JSON and replaces anything else by an empty one", () => {
    const b = observe(emptyBaseline(), { rtt: 5, loss: 1, jitter: 2 }, at(1), O).baseline;
    expect(parseBaseline(JSON.parse(JSON.stringify(b)))).toEqual(b);
    expect(parseBaseline(null)).toEqual(emptyBaseline());
    expect(parseBaseline({ rtt: { all: { n: "x" } } })).toEqual(emptyBaseline());
  });
});
