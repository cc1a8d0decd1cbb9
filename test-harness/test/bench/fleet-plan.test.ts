/** The benchmark fleet's ids and tunnel ring, and the CPU profile summary: pure functions. */
import { describe, expect, it } from "vitest";
import { bodyBucket } from "../../src/bench/cases/http-static.ts";
import { summarizeProfile } from "../../src/bench/profile.ts";
import { deviceId, TUNNELS_PER_DEVICE, tunnelEnds, tunnelId, tunnelIdsOf } from "../../src/bench/server/fleet-plan.ts";

describe("benchmark fleet plan", () => {
  it("every device is an end of exactly its 4 tunnels, and every tunnel joins two different devices", () => {
    for (const n of [5, 6, 101]) {
      const ends = new Map<number, string[]>();
      for (let num = 0; num < n * (TUNNELS_PER_DEVICE / 2); num++) {
        const [a, b] = tunnelEnds(num, n);
        expect(a).not.toBe(b);
        for (const i of [a, b]) ends.set(i, [...(ends.get(i) ?? []), tunnelId(num)]);
      }
      for (let i = 0; i < n; i++) {
        expect(tunnelIdsOf(i, n).sort()).toEqual(ends.get(i)!.sort());
        expect(new Set(tunnelIdsOf(i, n)).size).toBe(TUNNELS_PER_DEVICE);
      }
    }
  });

  it("ids are distinct v4 UUIDs derived from the index", () => {
    const ids = Array.from({ length: 1000 }, (_, i) => deviceId(i));
    expect(new Set(ids).size).toBe(1000);
    for (const id of [deviceId(0), deviceId(999_999), tunnelId(20_000)])
      expect(id).toMatch(/^[0-9a-f]{8}-0000-4000-8000-[0-9a-f]{12}$/);
  });

  it("API answer sizes share a baseline per 8 KiB", () => {
    expect(bodyBucket(1)).toBe(8192);
    expect(bodyBucket(8192)).toBe(8192);
    expect(bodyBucket(8193)).toBe(16_384);
    expect(bodyBucket(146_763)).toBe(147_456);
  });
});

describe("CPU profile summary", () => {
  it("adds self time per function and file, and inclusive time of matching frames", () => {
    const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
      id,
      callFrame: { functionName, url, lineNumber: 9 },
      children,
    });
    const s = summarizeProfile(
      {
        nodes: [
          frame(1, "(root)", "", [2, 4]),
          frame(2, "handler", "file:///r/apps/server/src/a.ts", [3]),
          frame(3, "parse", "file:///r/node_modules/zod/x.js"),
          frame(4, "(idle)", ""),
        ],
        samples: [2, 3, 3, 4],
        timeDeltas: [1000, 2000, 3000, 4000],
        startTime: 0,
        endTime: 10_000,
      },
      "apps/server",
    );
    expect(s.totalMs).toBe(10);
    // A sample's time is the delta before it: parse 2 + 3 ms, idle 4 ms, handler 1 ms; largest first.
    expect(s.functions.map((f) => [f.name, f.ms])).toEqual([
      ["parse zod/x.js:10", 5],
      ["(idle) (native):10", 4],
      ["handler apps/server/src/a.ts:10", 1],
    ]);
    expect(s.files.find((f) => f.name === "zod/x.js")?.ms).toBe(5);
    // handler's own 1 ms plus the 5 ms of parse below it.
    expect(s.inclusive).toEqual([{ name: "handler apps/server/src/a.ts:10", ms: 6, share: 0.6 }]);
  });

  it("counts only the profile's last seconds when asked", () => {
    const frame = (id: number, functionName: string) => ({ id, callFrame: { functionName, url: "", lineNumber: 0 } });
    // Samples at 1, 3, 6 and 10 s after the start: the last 5 s hold the two at 6 and 10 s.
    const profile = {
      nodes: [frame(1, "early"), frame(2, "late")],
      samples: [1, 1, 2, 2],
      timeDeltas: [1e6, 2e6, 3e6, 4e6],
      startTime: 0,
      endTime: 10e6,
    };
    expect(summarizeProfile(profile, undefined, 5).functions.map((f) => [f.name, f.ms])).toEqual([["late (native):1", 7000]]);
    expect(summarizeProfile(profile).totalMs).toBe(10_000);
  });
});
