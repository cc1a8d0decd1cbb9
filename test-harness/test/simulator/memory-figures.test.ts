/** Per-device memory figures are growth over the lowest reading: never negative when memory shrinks after warm-up. */
import { describe, expect, it } from "vitest";
import { MemoryFloor } from "../../src/simulator/memory-figures.ts";

const mib = 2 ** 20;

describe("MemoryFloor", () => {
  it("reports 0, not a negative figure, when RSS and heap fell below the warm-up reading", () => {
    const floor = new MemoryFloor();
    floor.see({ rssBytes: 120 * mib, heapUsedBytes: 40 * mib });
    // V8 gave the registration garbage back: lower than at warm-up.
    expect(floor.perDevice({ rssBytes: 100 * mib, heapUsedBytes: 30 * mib }, 999)).toEqual({ rssBytes: 0, heapUsedBytes: 0 });
  });

  it("measures growth over the lowest reading seen, spread over the devices added", () => {
    const floor = new MemoryFloor();
    floor.see({ rssBytes: 120 * mib, heapUsedBytes: 40 * mib });
    floor.see({ rssBytes: 100 * mib, heapUsedBytes: 30 * mib });
    expect(floor.perDevice({ rssBytes: 110 * mib, heapUsedBytes: 35 * mib }, 1000)).toEqual({
      rssBytes: Math.round((10 * mib) / 1000),
      heapUsedBytes: Math.round((5 * mib) / 1000),
    });
    expect(floor.perDevice({ rssBytes: 110 * mib, heapUsedBytes: 35 * mib }, 0)).toEqual({ rssBytes: null, heapUsedBytes: null });
  });

  it("never goes negative over any sequence of readings", () => {
    const floor = new MemoryFloor();
    let x = 7;
    for (let i = 0; i < 1000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const reading = { rssBytes: 50 * mib + (x % (80 * mib)), heapUsedBytes: 10 * mib + (x % (30 * mib)) };
      const per = floor.perDevice(reading, 1 + (i % 50));
      expect(per.rssBytes).toBeGreaterThanOrEqual(0);
      expect(per.heapUsedBytes).toBeGreaterThanOrEqual(0);
    }
  });
});
