import { describe, expect, it } from "vitest";
import { KEPT_TOTALS_CHARS, keptTotalsOf } from "./kept-totals.ts";

describe("keptTotalsOf", () => {
  it("keeps totals per database handle, none for a transaction", () => {
    const a = { isTransaction: false };
    const b = { isTransaction: false };
    keptTotalsOf(a)!.set("k", { version: "1", total: 5 });
    expect(keptTotalsOf(a)!.get("k")).toEqual({ version: "1", total: 5 });
    expect(keptTotalsOf(b)!.get("k")).toBeUndefined();
    expect(keptTotalsOf({ isTransaction: true })).toBeUndefined();
  });

  it("holds at most its characters of keys, the least recently used going first", () => {
    const totals = keptTotalsOf({ isTransaction: false }, 1000)!;
    const key = (i: number) => `${"x".repeat(100)}${i}`;
    for (let i = 0; i < 10; i++) totals.set(key(i), { version: String(i), total: i });
    // Each entry counts its key (101 characters) and 100: four fit.
    expect(totals.size).toBe(4);
    expect(totals.get(key(9))?.total).toBe(9);
    expect(totals.get(key(5))).toBeUndefined();
    expect(KEPT_TOTALS_CHARS).toBeGreaterThan(100_000);
  });
});
