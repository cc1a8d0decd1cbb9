/** batchLookup: look-ups that arrive together share one query, and each caller gets its own key's rows. */
import { describe, expect, it } from "vitest";
import { batchLookup } from "../../src/db/batch-lookup.ts";

describe("batchLookup", () => {
  it("answers concurrent callers from one query per batch, each with its own rows (empty when none)", async () => {
    const queries: string[][] = [];
    const rows = [
      { key: "a", n: 1 },
      { key: "b", n: 2 },
      { key: "a", n: 3 },
      { key: null, n: 4 },
    ];
    const lookup = batchLookup(
      async (keys) => {
        queries.push(keys);
        await new Promise((r) => setTimeout(r, 5));
        return rows.filter((r) => r.key !== null && keys.includes(r.key));
      },
      (r) => r.key,
    );
    const first = lookup.submit("a");
    const rest = ["b", "c", "a"].map((k) => lookup.submit(k));
    expect((await first).map((r) => r.n)).toEqual([1, 3]);
    expect((await Promise.all(rest)).map((rs) => rs.map((r) => r.n))).toEqual([[2], [], [1, 3]]);
    // The lone first key at once, the three that came during it together (a repeated key asked once).
    expect(queries).toEqual([["a"], ["b", "c", "a"]]);
  });

  it("asks the database for each key once however many callers ask for it", async () => {
    const queries: string[][] = [];
    const lookup = batchLookup(
      async (keys) => {
        queries.push(keys);
        return keys.map((k) => ({ k }));
      },
      (r) => r.k,
    );
    await lookup.submit("x");
    await Promise.all([lookup.submit("y"), lookup.submit("y"), lookup.submit("y")]);
    expect(queries.at(-1)).toEqual(["y"]);
  });
});
