import { TernApiError } from "@tern/client";
import { describe, expect, it } from "vitest";
import { actErrorText, rolloutActs } from "./acts.ts";
import { formatSize, windowText } from "./format.ts";
import { rolloutProgress } from "./progress.ts";

describe("rolloutProgress", () => {
  it("counts finished devices (upgraded, rolled back, failed, skipped) against all, in the bar's order", () => {
    const p = rolloutProgress({ pending: 5, upgraded: 2, failed: 1, installing: 1, skipped: 1, sending: 0 });
    expect(p.total).toBe(10);
    expect(p.finished).toBe(4);
    expect(p.percent).toBe(40);
    expect(p.sections.map((s) => [s.state, s.count, s.percent])).toEqual([
      ["upgraded", 2, 20],
      ["failed", 1, 10],
      ["skipped", 1, 10],
      ["installing", 1, 10],
      ["pending", 5, 50],
    ]);
    expect(p.summary).toBe("2 upgraded, 1 failed, 1 skipped, 1 installing, 5 pending");
  });

  it("rounds the percentage down (never 100 % before the last device) and says so for an empty rollout", () => {
    expect(rolloutProgress({ upgraded: 199, pending: 1 }).percent).toBe(99);
    expect(rolloutProgress({})).toMatchObject({ total: 0, finished: 0, percent: 0, sections: [], summary: "no devices" });
  });
});

describe("rolloutActs", () => {
  it("offers what the state allows", () => {
    expect(rolloutActs("running")).toEqual({ pause: true, resume: false, cancel: true });
    expect(rolloutActs("paused")).toEqual({ pause: false, resume: true, cancel: true });
    expect(rolloutActs("cancelled")).toEqual({ pause: false, resume: false, cancel: false });
    expect(rolloutActs("complete")).toEqual({ pause: false, resume: false, cancel: false });
  });

  it("says a ROLLOUT_CONFLICT in words, with the code; other errors as the API says them", () => {
    const conflict = new TernApiError("a cancelled rollout cannot pause", "ROLLOUT_CONFLICT", 409);
    expect(actErrorText("pause", conflict)).toBe(
      "The rollout cannot pause now: it changed meanwhile (a cancelled rollout cannot pause). The page shows its current state. (ROLLOUT_CONFLICT)",
    );
    expect(actErrorText("cancel", new TernApiError("no", "FORBIDDEN", 403))).toBe("no (FORBIDDEN)");
  });
});

describe("formats", () => {
  it("writes sizes and windows", () => {
    expect(formatSize(512)).toBe("512 B");
    expect(formatSize(4096)).toBe("4.0 KiB");
    expect(formatSize(5 * 1024 * 1024 + 512 * 1024)).toBe("5.5 MiB");
    expect(windowText({ start: "23:00", end: "02:00" })).toBe("23:00–02:00 UTC");
    expect(windowText(null)).toBe("any time");
  });
});
