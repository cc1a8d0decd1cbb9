import { describe, expect, it } from "vitest";
import { listOf } from "./list-of.ts";

describe("listOf", () => {
  it("leads from a resource's page to its list, and nowhere from a list", () => {
    expect(listOf("/devices/3f2a")).toBe("/devices");
    expect(listOf("/tunnels/9/")).toBe("/tunnels");
    expect(listOf("/devices")).toBeNull();
    expect(listOf("/")).toBeNull();
  });
});
