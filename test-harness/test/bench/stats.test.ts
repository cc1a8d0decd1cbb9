import { describe, expect, it } from "vitest";
import { percentile, perSecond, Samples, summarize } from "../../src/bench/stats.ts";

describe("percentile (nearest rank)", () => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1);

  it("returns the smallest value with p % of samples at or below it", () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    expect(percentile([5], 99)).toBe(5);
    expect(percentile([1, 2], 50)).toBe(1);
    expect(percentile([1, 2], 51)).toBe(2);
  });

  it("is NaN without samples and rejects p outside 0–100", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(/0–100/);
    expect(() => percentile([1], Number.NaN)).toThrow(/0–100/);
  });
});

describe("summarize and Samples", () => {
  it("sorts its input and reports count, min, mean, p50/p90/p99 and max", () => {
    const values = [9, 1, 5, 3, 7, 2, 8, 4, 6, 10];
    expect(summarize(values)).toEqual({ count: 10, min: 1, mean: 5.5, p50: 5, p90: 9, p99: 10, max: 10 });
    expect(values[0]).toBe(9);
  });

  it("grows past its first buffer without losing samples", () => {
    const s = new Samples();
    for (let i = 5000; i >= 1; i--) s.add(i / 10);
    expect(s.count).toBe(5000);
    const sum = s.summary();
    expect([sum.min, sum.max, sum.p50, sum.p99]).toEqual([0.1, 500, 250, 495]);
  });

  it("summarises nothing as NaN figures with count 0", () => {
    expect(new Samples().summary()).toMatchObject({ count: 0, p50: Number.NaN });
  });
});

describe("perSecond", () => {
  it("counts each second after the start, empty seconds as 0, NaN left out", () => {
    expect(perSecond([1000, 1500, 3999, 4000, Number.NaN, 999], 1000)).toEqual([3, 0, 1, 1]);
    expect(perSecond([500], 1000)).toEqual([1]);
    expect(perSecond([], 0)).toEqual([]);
  });
});
