import { ROLE_PERMISSIONS } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { differsFromRole, maskWords, roleMasks, toggleBit } from "./masks.ts";

describe("maskWords", () => {
  it("names the bits of a mask", () => {
    expect(maskWords(15)).toBe("get post put del");
    expect(maskWords(1 | 4)).toBe("get put");
    expect(maskWords(0)).toBe("none");
    expect(maskWords(undefined)).toBe("none");
  });
});

describe("toggleBit / roleMasks / differsFromRole", () => {
  it("starts from the role and tells which resources were changed", () => {
    const viewer = roleMasks("viewer");
    expect(viewer).toEqual(ROLE_PERMISSIONS.viewer);
    expect(differsFromRole(viewer, "viewer")).toEqual([]);
    const more = toggleBit(viewer, "devices", "put");
    expect(more.devices).toBe(1 | 4);
    expect(differsFromRole(more, "viewer")).toEqual(["devices"]);
    expect(toggleBit(more, "devices", "put").devices).toBe(1);
    // the role's own masks are not changed
    expect(ROLE_PERMISSIONS.viewer.devices).toBe(1);
  });
});
