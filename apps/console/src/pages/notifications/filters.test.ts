import { describe, expect, it } from "vitest";
import { DEFAULT_INBOX, inboxFilters, inboxSummary } from "./filters.ts";

describe("inboxFilters", () => {
  it("shows the open notifications by default", () => {
    expect(inboxFilters(DEFAULT_INBOX)).toEqual([{ key: "resolved", op: "==", val: false }]);
  });
  it("is empty (everything) with every filter at all", () => {
    expect(inboxFilters({ status: "all", resolved: "all", severity: "all", search: "" })).toEqual([]);
  });
  it("ANDs read state, resolution, severity and a title part", () => {
    expect(inboxFilters({ status: "unread", resolved: "resolved", severity: "critical", search: " loss " })).toEqual([
      { key: "status", op: "==", val: "unread" },
      { key: "resolved", op: "==", val: true },
      { key: "severity", op: "==", val: "critical" },
      { key: "title", op: "contains", val: "loss" },
    ]);
  });
});

describe("inboxSummary", () => {
  it("counts unread and critical ones", () => {
    expect(
      inboxSummary([
        { status: "unread", severity: "critical" },
        { status: "read", severity: "warning" },
        { status: "unread", severity: "info" },
      ]),
    ).toBe("3 notifications, 2 unread, 1 critical");
  });
});
