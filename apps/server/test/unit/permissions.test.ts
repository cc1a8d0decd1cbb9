/** Permission arithmetic and the login rate limiter. */
import { ALL, PERM, ROLE_PERMISSIONS } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import {
  bitForMethod,
  completePermissions,
  exceedingResources,
  hasPermission,
  intersectPermissions,
  strongerRole,
} from "../../src/auth/permissions.ts";
import { createRateLimiter } from "../../src/auth/rate-limiter.ts";
import { overlappingSubnets } from "../../src/services/tunnels/range.ts";

describe("permissions", () => {
  it("maps methods to bits get=1 post=2 put=4 del=8", () => {
    expect(["GET", "post", "PUT", "PATCH", "delete"].map(bitForMethod)).toEqual(["get", "post", "put", "put", "del"]);
    expect(PERM).toEqual({ get: 1, post: 2, put: 4, del: 8 });
    expect(() => bitForMethod("TRACE")).toThrow();
  });

  it("completes masks from the role and finds what exceeds a holder", () => {
    const viewerKey = completePermissions("viewer", { devices: ALL });
    expect(viewerKey.devices).toBe(ALL);
    expect(viewerKey.tunnels).toBe(ROLE_PERMISSIONS.viewer.tunnels);
    expect(exceedingResources(viewerKey, ROLE_PERMISSIONS.manager)).toEqual([]);
    expect(exceedingResources(viewerKey, ROLE_PERMISSIONS.viewer)).toEqual(["devices"]);
    expect(exceedingResources(ROLE_PERMISSIONS.owner, ROLE_PERMISSIONS.manager).sort()).toEqual([
      "accounts",
      "members",
      "organizations",
    ]);
  });

  it("intersects masks bit by bit", () => {
    const a = completePermissions("owner", { devices: PERM.get | PERM.put });
    const b = completePermissions("owner", { devices: PERM.put | PERM.del });
    const both = intersectPermissions(a, b);
    expect(both.devices).toBe(PERM.put);
    expect(hasPermission(both, "devices", "put")).toBe(true);
    expect(hasPermission(both, "devices", "get")).toBe(false);
  });

  it("picks the stronger role", () => {
    expect(strongerRole("viewer", "manager")).toBe("manager");
    expect(strongerRole("owner", null)).toBe("owner");
    expect(strongerRole(null, null)).toBe(null);
  });
});

describe("rate limiter", () => {
  it("blocks after the limit until the window ends, per key", () => {
    const limiter = createRateLimiter(2, 60);
    const t0 = 1_000_000;
    limiter.hit("a", t0);
    expect(limiter.blockedFor("a", t0)).toBeNull();
    limiter.hit("a", t0 + 1000);
    expect(limiter.blockedFor("a", t0 + 1000)).toBe(59);
    expect(limiter.blockedFor("b", t0 + 1000)).toBeNull();
    expect(limiter.blockedFor("a", t0 + 60_000)).toBeNull();
    limiter.hit("b", t0);
    limiter.hit("b", t0);
    limiter.reset("b");
    expect(limiter.blockedFor("b", t0)).toBeNull();
  });
});

describe("tunnel range against LAN subnets", () => {
  it("finds the LAN subnets a range overlaps", () => {
    const lans = ["10.100.5.0/24", "192.168.1.0/24", "10.0.0.0/8", "garbage"];
    expect(overlappingSubnets("10.100.0.0/16", lans)).toEqual(["10.100.5.0/24", "10.0.0.0/8"]);
    expect(overlappingSubnets("172.16.0.0/16", lans)).toEqual([]);
    expect(overlappingSubnets("192.168.1.128/25", lans)).toEqual(["192.168.1.0/24"]);
  });
});
