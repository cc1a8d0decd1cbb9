import { describe, expect, it } from "vitest";
import { jsonArrayInSlices, textInSlices } from "./in-slices.ts";
import type { SampleRow } from "./ingest-buffer.ts";
import { copyLines } from "./sample-copy.ts";

const sample = (i: number): SampleRow => ({
  tunnelId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  deviceId: "10000000-0000-4000-8000-000000000001",
  side: i % 2 ? "b" : "a",
  at: new Date(Date.UTC(2026, 11, 5, 12, 0, i % 60, i % 1000)),
  up: i % 3 !== 0,
  loss: i / 7,
  rtt: 12.5 + i,
  jitter: 0,
  samples: 300,
  windowMs: i % 4 ? 60_000 : null,
  sent: i % 5 ? 1000 + i : null,
  received: i % 5 ? 990 + i : null,
});

/** Whether a turn of the event loop (a setImmediate queued before the call) ran before `work` finished. */
async function yieldedDuring(work: () => Promise<unknown>): Promise<boolean> {
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  await work();
  return turned;
}

describe("a flush's text in slices", () => {
  it("writes the same JSON as JSON.stringify of the whole array, at every size around the slice", async () => {
    for (const n of [0, 1, 4, 5, 6, 10, 23]) {
      const rows = Array.from({ length: n }, (_, i) => ({ ...sample(i), nested: { a: [i, null, 'x"y'] }, none: undefined }));
      expect(await jsonArrayInSlices(rows, 5)).toBe(JSON.stringify(rows));
    }
  });

  it("lets the event loop turn between slices, and not for a batch of one slice", async () => {
    const rows = Array.from({ length: 12 }, (_, i) => sample(i));
    expect(await yieldedDuring(() => jsonArrayInSlices(rows, 5))).toBe(true);
    expect(await yieldedDuring(() => jsonArrayInSlices(rows, 12))).toBe(false);
  });

  it("renders COPY lines slice by slice into the same text as all rows at once, turning the loop between", async () => {
    const rows = Array.from({ length: 11 }, (_, i) => sample(i));
    const chunks: string[] = [];
    const turned = await yieldedDuring(async () => {
      for await (const c of textInSlices(rows, copyLines, 4)) chunks.push(c);
    });
    expect(chunks).toHaveLength(3);
    expect(chunks.join("")).toBe(copyLines(rows));
    expect(turned).toBe(true);
    const none: string[] = [];
    for await (const c of textInSlices([], copyLines, 4)) none.push(c);
    expect(none).toEqual([]);
  });
});
