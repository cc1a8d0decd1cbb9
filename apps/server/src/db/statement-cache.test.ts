import { describe, expect, it } from "vitest";
import { StatementCache } from "./statement-cache.ts";

describe("StatementCache", () => {
  it("finds a text by its whole content, texts of the same length apart", () => {
    const cache = new StatementCache<string>(10);
    cache.add("select 1 = 1", "a");
    cache.add("select 2 = 2", "b");
    cache.add("select 10", "c");
    // New strings of the same text, as a query builder makes them at every execution.
    expect(cache.get(["select ", "2 = 2"].join(""))).toBe("b");
    expect(cache.get(`select ${1} = 1`)).toBe("a");
    expect(cache.get("select 10")).toBe("c");
    expect(cache.get("select 3 = 3")).toBeUndefined();
    expect(cache.size).toBe(3);
  });

  it("evicts the least recently used, a use by get counting, and answers what it evicted", () => {
    const cache = new StatementCache<string>(3);
    expect(cache.add("q1", "s1")).toBeUndefined();
    expect(cache.add("q2", "s2")).toBeUndefined();
    expect(cache.add("q3", "s3")).toBeUndefined();
    expect(cache.get("q1")).toBe("s1");
    expect(cache.add("q4", "s4")).toBe("s2");
    expect(cache.add("q5", "s5")).toBe("s3");
    expect(cache.size).toBe(3);
    expect(cache.values().sort()).toEqual(["s1", "s4", "s5"]);
    expect(cache.get("q2")).toBeUndefined();
  });

  it("empties on clear", () => {
    const cache = new StatementCache<string>(3);
    cache.add("q1", "s1");
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.get("q1")).toBeUndefined();
    expect(cache.values()).toEqual([]);
  });
});
