import { describe, expect, it } from "vitest";
import { jobDuration, jobFilters, jobScope, jobsLink } from "./filters.ts";

describe("jobFilters", () => {
  it("is empty for everything", () => {
    expect(jobFilters({ state: "all", type: "all", device: "  " })).toEqual([]);
  });
  it("ANDs state, type and a device name part", () => {
    expect(jobFilters({ state: "failed", type: "tunnels", device: " branch-1 " })).toEqual([
      { key: "state", op: "==", val: "failed" },
      { key: "type", op: "==", val: "tunnels" },
      { key: "device.name", op: "contains", val: "branch-1" },
    ]);
  });
});

describe("jobDuration", () => {
  it("says queued before the start, then the elapsed time", () => {
    expect(jobDuration({ startedAt: null, finishedAt: null })).toBe("queued");
    expect(jobDuration({ startedAt: "2026-01-01T00:00:00Z", finishedAt: "2026-01-01T00:00:42Z" })).toBe("42 s");
    expect(jobDuration({ startedAt: "2026-01-01T00:00:00Z", finishedAt: null }, Date.parse("2026-01-01T00:02:05Z"))).toBe(
      "2 min 5 s",
    );
  });
});

describe("jobScope", () => {
  it("reads a job group or job ids from the page's address, and makes the link back", () => {
    expect(jobScope(new URLSearchParams("group=g1"))).toEqual({ group: "g1" });
    expect(jobScope(new URLSearchParams("ids=a, b,,"))).toEqual({ ids: "a,b" });
    expect(jobScope(new URLSearchParams("ids=&group="))).toBeNull();
    expect(jobScope(new URLSearchParams(""))).toBeNull();
    expect(jobsLink({ group: "g1" })).toBe("/jobs?group=g1");
    expect(jobsLink({ ids: "a,b" })).toBe("/jobs?ids=a%2Cb");
  });
});
