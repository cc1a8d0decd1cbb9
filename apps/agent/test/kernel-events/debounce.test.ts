import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EventBatcher } from "../../src/kernel-events/index.ts";

describe("event batcher", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const make = (quietMs: number, maxWaitMs: number) => {
    const batches: { items: number[]; at: number }[] = [];
    const b = new EventBatcher<number>({ quietMs, maxWaitMs, now: () => Date.now() }, (items, at) => batches.push({ items, at }));
    return { b, batches };
  };

  it("hands a burst over once, quietMs after its last event, with the time of its first", () => {
    const { b, batches } = make(5, 20);
    const t0 = Date.now();
    b.push(1);
    vi.advanceTimersByTime(2);
    b.push(2);
    vi.advanceTimersByTime(4);
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([{ items: [1, 2], at: t0 }]);
    b.push(3);
    vi.advanceTimersByTime(5);
    expect(batches.map((x) => x.items)).toEqual([[1, 2], [3]]);
  });

  it("never holds a batch longer than maxWaitMs under a steady stream", () => {
    const { b, batches } = make(5, 20);
    for (let t = 0; t < 30; t += 3) {
      b.push(t);
      vi.advanceTimersByTime(3);
    }
    vi.advanceTimersByTime(10);
    expect(batches[0]!.items).toEqual([0, 3, 6, 9, 12, 15, 18]);
    expect(batches.flatMap((x) => x.items)).toHaveLength(10);
  });

  it("drops what is pending on cancel", () => {
    const { b, batches } = make(5, 20);
    b.push(1);
    b.cancel();
    vi.advanceTimersByTime(50);
    expect(batches).toEqual([]);
  });
});
