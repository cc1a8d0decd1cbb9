/** GroupCommit: batching of concurrent submits, outcomes in order, and a failed batch retried item by item. */
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/db/group-commit.ts";

describe("GroupCommit", () => {
  it("runs a lone item at once, and gathers what arrives during a flush into the next batch", async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number, string>(async (batch) => {
      batches.push(batch);
      await new Promise((r) => setTimeout(r, 20));
      return batch.map((n) => `out ${n}`);
    });
    const first = gc.submit(0);
    const rest = Array.from({ length: 9 }, (_, i) => gc.submit(i + 1));
    expect(await first).toBe("out 0");
    expect(await Promise.all(rest)).toEqual(Array.from({ length: 9 }, (_, i) => `out ${i + 1}`));
    expect(batches).toEqual([[0], [1, 2, 3, 4, 5, 6, 7, 8, 9]]);
  });

  it("keeps batches at most maxBatch long", async () => {
    const sizes: number[] = [];
    const gc = new GroupCommit<number, number>(async (batch) => {
      sizes.push(batch.length);
      return batch;
    }, 4);
    const outs = await Promise.all(Array.from({ length: 11 }, (_, i) => gc.submit(i)));
    expect(outs).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(sizes).toEqual([1, 4, 4, 2]);
  });

  it("retries a failed batch item by item, so only the bad item's caller sees the error", async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number, number>(async (batch) => {
      batches.push(batch);
      await Promise.resolve();
      if (batch.includes(3)) throw new Error("item 3 cannot be written");
      return batch.map((n) => n * 10);
    });
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => gc.submit(n)));
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([
      10,
      20,
      "item 3 cannot be written",
      40,
    ]);
    expect(batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    // The queue goes on after a failure.
    expect(await gc.submit(5)).toBe(50);
  });
});
