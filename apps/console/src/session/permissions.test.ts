import { describe, expect, it } from "vitest";
import { roleCan } from "./permissions.ts";

describe("roleCan", () => {
  it("follows the protocol's role masks", () => {
    expect(roleCan("owner", "devices", "del")).toBe(true);
    expect(roleCan("manager", "devices", "put")).toBe(true);
    expect(roleCan("manager", "members", "put")).toBe(false);
    expect(roleCan("viewer", "devices", "get")).toBe(true);
    expect(roleCan("viewer", "devices", "put")).toBe(false);
    expect(roleCan("viewer", "devices", "del")).toBe(false);
    expect(roleCan("viewer", "audit", "get")).toBe(false);
  });
  it("nobody signed in may do nothing", () => {
    expect(roleCan(null, "devices", "get")).toBe(false);
  });
});
