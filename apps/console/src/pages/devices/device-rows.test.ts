import type { DeviceSummary } from "@tern/client";
import { describe, expect, it } from "vitest";
import { deviceRows, type RowQuery, statusOf, tagsOf } from "./device-rows.ts";

let n = 0;
const device = (name: string, over: Partial<DeviceSummary> = {}): DeviceSummary => ({
  id: `id-${++n}`,
  name,
  hostname: `${name}.example`,
  isApproved: true,
  isConnected: true,
  pendingNotifications: 0,
  interfaces: [],
  ...over,
});
const q = (over: Partial<RowQuery> = {}): RowQuery => ({
  search: "",
  status: "all",
  rateLimitedOnly: false,
  sort: "name",
  desc: false,
  ...over,
});

describe("deviceRows", () => {
  const fleet = [
    device("branch-10"),
    device("branch-9", { isConnected: false, pendingNotifications: 3 }),
    device("hq", { isApproved: false, isConnected: false }),
    device("lab", {
      interfaces: [{ id: "i", name: "eth0", IPv4: "192.0.2.7", isPublicAddressRateLimited: true }] as DeviceSummary["interfaces"],
    }),
  ];
  it("sorts names naturally, either way", () => {
    expect(deviceRows(fleet, q()).map((d) => d.name)).toEqual(["branch-9", "branch-10", "hq", "lab"]);
    expect(deviceRows(fleet, q({ desc: true })).map((d) => d.name)).toEqual(["lab", "hq", "branch-10", "branch-9"]);
  });
  it("sorts by status and by pending notifications", () => {
    expect(deviceRows(fleet, q({ sort: "status" })).map(statusOf)).toEqual(["pending", "offline", "online", "online"]);
    expect(deviceRows(fleet, q({ sort: "pendingNotifications", desc: true }))[0]?.name).toBe("branch-9");
  });
  it("filters by status, the rate-limited flag, and searches name, hostname and address", () => {
    expect(deviceRows(fleet, q({ status: "pending" })).map((d) => d.name)).toEqual(["hq"]);
    expect(deviceRows(fleet, q({ rateLimitedOnly: true })).map((d) => d.name)).toEqual(["lab"]);
    expect(deviceRows(fleet, q({ search: "BRANCH" })).map((d) => d.name)).toEqual(["branch-9", "branch-10"]);
    expect(deviceRows(fleet, q({ search: "192.0.2" })).map((d) => d.name)).toEqual(["lab"]);
  });
  it("leaves the API's list as it was", () => {
    const copy = [...fleet];
    deviceRows(fleet, q({ desc: true }));
    expect(fleet).toEqual(copy);
  });

  it("filters by tag and lists the tags of the fleet", () => {
    const tagged = [
      device("a", { tags: ["site:paris", "core"] }),
      device("b", { tags: ["site:lyon"] }),
      device("c", { tags: [] }),
    ];
    expect(deviceRows(tagged, q({ tag: "site:paris" })).map((d) => d.name)).toEqual(["a"]);
    expect(deviceRows(tagged, q({ tag: "" })).map((d) => d.name)).toEqual(["a", "b", "c"]);
    expect(tagsOf(tagged)).toEqual(["core", "site:lyon", "site:paris"]);
  });
});
