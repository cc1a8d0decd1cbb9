import { describe, expect, it } from "vitest";
import { toColumns } from "./stats.ts";

describe("toColumns", () => {
  it("aligns both sides on one time axis, this device's side first, gaps as null", () => {
    const cols = toColumns(
      [
        { at: "2026-01-01T00:01:00Z", side: "b", loss: 5, rtt: 30, jitter: 2 },
        { at: "2026-01-01T00:00:00Z", side: "a", loss: 0, rtt: 10, jitter: 1 },
        { at: "2026-01-01T00:01:00Z", side: "a", loss: 1, rtt: 11, jitter: 1.5 },
      ],
      "b",
    );
    expect(cols.times).toEqual([Date.parse("2026-01-01T00:00:00Z") / 1000, Date.parse("2026-01-01T00:01:00Z") / 1000]);
    expect(cols.loss).toEqual([
      [null, 5],
      [0, 1],
    ]);
    expect(cols.rtt[1]).toEqual([10, 11]);
  });
});
