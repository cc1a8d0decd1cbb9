/**
 * The security matrix, applied to every route of the OpenAPI document (so a
 * route added later is covered without editing this file):
 *   - no token / a bad token → 401
 *   - another tenant's user or key → 403 or 404, and nothing of this tenant in the body
 *   - viewer, manager and keys: 403 exactly where their masks lack the route's bit
 *   - the account owner passes authorization (proves the route is reachable at all)
 *   - routes of the user's own account (`auth: "user"`): 401 without a login, 403 for any access
 *     token, and another user never reaches this user's sessions
 */
import { ALL, PERM, type PermissionBit, type PermissionResource, ROLE_PERMISSIONS, type Role } from "@tern/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import type { TernAuthExtension } from "../src/http/route.ts";
import { type Fixture, SECURITY_FIXTURES } from "./support/security-fixtures.ts";
import { type TestServer, type TestUser, useTestServer } from "./support/test-server.ts";

interface Operation {
  method: string;
  path: string;
  auth: TernAuthExtension;
}

type Protected = Operation & {
  auth: Exclude<TernAuthExtension, { public: true } | { user: true } | { installation: true }>;
};
/** Installation-wide routes (branding): installation administrators only (owners of the first account). */
type InstallationRoute = Operation & { auth: { installation: true } };
/** Routes of the signed-in user's own account (password, sessions, 2FA): a user session, never a key, no organization. */
type UserRoute = Operation & { auth: { user: true } };

const t = useTestServer();
let operations: Operation[] = [];
let tenantB: TestUser & { orgId: string; accountId: string };
let keyB: string;
let viewer: TestUser;
let manager: TestUser;
let aOrgName: string;

async function createKey(server: TestServer, token: string, body: unknown, org?: string): Promise<string> {
  const res = await server.api<{ token: string }>("POST", "/api/accesstokens", { token, body, query: { org } });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${res.text}`);
  return res.body.token;
}

function isProtected(op: Operation): op is Protected {
  return "resource" in op.auth;
}

function isUserRoute(op: Operation): op is UserRoute {
  return "user" in op.auth;
}

function isInstallationRoute(op: Operation): op is InstallationRoute {
  return "installation" in op.auth;
}

const NO_FIXTURE: Fixture = { params: {} };

async function fixtureFor(op: Operation): Promise<Fixture> {
  return (await SECURITY_FIXTURES[op.path]?.(t)) ?? NO_FIXTURE;
}

async function call(op: Operation, token: string | undefined, fixture: Fixture, org?: string) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => fixture.params[name] ?? crypto.randomUUID());
  const usesOrgQuery = isProtected(op) && !op.auth.orgParam && !op.auth.accountParam;
  return t.api(op.method.toUpperCase(), path, {
    token,
    query: { org: usesOrgQuery ? org : undefined },
    body: ["post", "put", "patch"].includes(op.method) ? (fixture.bodies?.[op.method] ?? {}) : undefined,
  });
}

const keyCache = new Map<string, string>();
/** An owner-role key of tenant A with full masks except `clear` bits on one resource, or only `only` bits. */
async function keyFor(resource: PermissionResource, masks: "all-but" | "only", bit: PermissionBit): Promise<string> {
  const id = `${masks}:${resource}:${bit}`;
  const cached = keyCache.get(id);
  if (cached) return cached;
  const permissions =
    masks === "all-but"
      ? { ...ROLE_PERMISSIONS.owner, [resource]: ALL & ~PERM[bit] }
      : Object.fromEntries(Object.keys(ROLE_PERMISSIONS.owner).map((r) => [r, r === resource ? PERM[bit] : 0]));
  const token = await createKey(t, t.admin.token, { name: id, role: "owner", permissions });
  keyCache.set(id, token);
  return token;
}

function expectedAllowed(role: Role, op: Protected, accountWide: boolean): boolean {
  if (op.auth.scope === "account" && !accountWide) return false;
  return (ROLE_PERMISSIONS[role][op.auth.resource as PermissionResource] & PERM[op.auth.permission as PermissionBit]) !== 0;
}

beforeAll(async () => {
  const doc = (
    await t.api<{ paths: Record<string, Record<string, { "x-tern-auth": TernAuthExtension }>> }>("GET", "/api/openapi.json")
  ).body;
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method, path, auth: op["x-tern-auth"] })),
  );
  tenantB = await t.createTenant("Beta");
  keyB = await createKey(t, tenantB.token, { name: "beta-owner-key", role: "owner" });
  viewer = await t.addMember("viewer");
  manager = await t.addMember("manager");
  const org = await t.api<{ name: string }>("GET", `/api/organizations/${t.admin.orgId}`, { token: t.admin.token });
  aOrgName = org.body.name;
});

describe("security matrix", () => {
  it("finds the routes in the OpenAPI document, each declaring public or a permission", () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const op of operations) expect(op.auth, `${op.method} ${op.path}`).toBeDefined();
    expect(operations.filter(isProtected).length).toBeGreaterThanOrEqual(15);
  });

  it("no token and a bad token → 401 UNAUTHENTICATED on every protected route", async () => {
    for (const op of operations.filter((o) => isProtected(o) || isUserRoute(o) || isInstallationRoute(o))) {
      for (const token of [undefined, "not-a-token", "tern_at_forged", "eyJhbGciOiJIUzI1NiJ9.e30.x"]) {
        const res = await call(op, token, NO_FIXTURE);
        expect(res.status, `${op.method} ${op.path} with ${token ?? "no token"}`).toBe(401);
        expect((res.body as { code: string }).code).toBe("UNAUTHENTICATED");
      }
    }
  });

  it("another tenant's user and key → 403/404 with nothing of this tenant in the body", async () => {
    for (const op of operations.filter(isProtected)) {
      const fixture = await fixtureFor(op);
      const secrets = [t.admin.orgId, t.admin.accountId, aOrgName, t.admin.email, ...Object.values(fixture.params)];
      for (const [who, token] of [
        ["tenant B user", tenantB.token],
        ["tenant B key", keyB],
      ] as const) {
        // Aimed at tenant A: its organization named explicitly, and its resources' ids in the path.
        const res = await call(op, token, fixture, t.admin.orgId);
        const label = `${op.method} ${op.path} as ${who}`;
        expect([403, 404], `${label}: ${res.text}`).toContain(res.status);
        for (const s of secrets) expect(res.text, label).not.toContain(s);
        // In its own organization, with ids of tenant A's resources in the path.
        if (Object.keys(fixture.params).length) {
          const own = await call(op, token, fixture);
          expect([403, 404], `${label} (own org): ${own.text}`).toContain(own.status);
          for (const s of secrets) expect(own.text, label).not.toContain(s);
        }
      }
    }
  });

  it("viewer and manager: 403 exactly where their role lacks the route's bit", async () => {
    for (const op of operations.filter(isProtected)) {
      const fixture = await fixtureFor(op);
      for (const [role, user] of [
        ["viewer", viewer],
        ["manager", manager],
      ] as const) {
        const res = await call(op, user.token, fixture);
        const label = `${op.method} ${op.path} as org ${role}: ${res.status} ${res.text}`;
        if (expectedAllowed(role, op, false)) expect([401, 403], label).not.toContain(res.status);
        else {
          expect(res.status, label).toBe(403);
          expect((res.body as { code: string }).code).toBe("FORBIDDEN");
        }
      }
    }
  });

  it("a key without the route's bit → 403; a key with only that bit passes authorization", async () => {
    for (const op of operations.filter(isProtected)) {
      const resource = op.auth.resource as PermissionResource;
      const bit = op.auth.permission as PermissionBit;
      const fixture = await fixtureFor(op);
      const without = await call(op, await keyFor(resource, "all-but", bit), fixture);
      expect(without.status, `${op.method} ${op.path} without '${bit}' on ${resource}: ${without.text}`).toBe(403);
      const only = await call(op, await keyFor(resource, "only", bit), fixture);
      const label = `${op.method} ${op.path} with only '${bit}' on ${resource}: ${only.status} ${only.text}`;
      // Account-wide acts need an account role, which keys never have.
      if (op.auth.scope === "account") expect(only.status, label).toBe(403);
      else expect([401, 403], label).not.toContain(only.status);
    }
  });

  it("user routes: every kind of key → 403; every signed-in user (any role, any tenant) passes", async () => {
    const users = operations.filter(isUserRoute);
    expect(users.length).toBeGreaterThanOrEqual(1);
    const ownerKey = await createKey(t, t.admin.token, { name: "user-route-owner-key", role: "owner" });
    for (const op of users) {
      for (const key of [ownerKey, keyB]) {
        const res = await call(op, key, NO_FIXTURE);
        expect(res.status, `${op.method} ${op.path} with a key: ${res.text}`).toBe(403);
        expect((res.body as { code: string }).code).toBe("FORBIDDEN");
      }
      for (const user of [t.admin, viewer, manager, tenantB]) {
        const res = await call(op, user.token, NO_FIXTURE);
        const label = `${op.method} ${op.path} as ${user.email}: ${res.status} ${res.text}`;
        // Past authorization: a 403 here may only be the route's own answer (a wrong proof), never FORBIDDEN.
        expect(res.status, label).not.toBe(401);
        if (res.status === 403) expect((res.body as { code: string }).code, label).not.toBe("FORBIDDEN");
      }
    }
  });

  it("installation routes: every key, other tenants' owners and non-owners → 403; the first account's owner passes", async () => {
    const routes = operations.filter(isInstallationRoute);
    expect(routes.length).toBeGreaterThanOrEqual(1);
    const ownerKey = await createKey(t, t.admin.token, { name: "installation-route-owner-key", role: "owner" });
    for (const op of routes) {
      const fixture = await fixtureFor(op);
      for (const [who, token] of [
        ["owner key of A", ownerKey],
        ["tenant B key", keyB],
        ["tenant B owner", tenantB.token],
        ["org viewer of A", viewer.token],
        ["org manager of A", manager.token],
      ] as const) {
        const res = await call(op, token, fixture);
        expect(res.status, `${op.method} ${op.path} as ${who}: ${res.text}`).toBe(403);
        expect((res.body as { code: string }).code).toBe("FORBIDDEN");
      }
      const res = await call(op, t.admin.token, fixture);
      expect([401, 403], `${op.method} ${op.path} as the installation's first owner: ${res.text}`).not.toContain(res.status);
    }
  });

  it("the account owner passes authorization on every route", async () => {
    for (const op of operations.filter(isProtected)) {
      const res = await call(op, t.admin.token, await fixtureFor(op));
      expect([401, 403], `${op.method} ${op.path}: ${res.status} ${res.text}`).not.toContain(res.status);
    }
  });
});

describe("routes of the user's own account", () => {
  it("a key is refused (403); the signed-in user passes; another user gets 404 for this user's sessions", async () => {
    const userOps = operations.filter(isUserRoute);
    expect(userOps.length).toBeGreaterThanOrEqual(3);
    const ownerKey = await createKey(t, t.admin.token, { name: "user-routes-owner-key", role: "owner" });
    const [, payload] = t.admin.token.split(".");
    const { sid } = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { sid: string };
    const fixture: Fixture = { params: { id: sid }, bodies: { post: { currentPassword: "x", newPassword: "0123456789" } } };
    for (const op of userOps) {
      const byKey = await call(op, ownerKey, fixture);
      expect(byKey.status, `${op.method} ${op.path} with a key: ${byKey.text}`).toBe(403);
      expect((byKey.body as { code: string }).code).toBe("FORBIDDEN");
      const byOther = await call(op, tenantB.token, fixture);
      expect([401, 403], `${op.method} ${op.path} as tenant B: ${byOther.text}`).not.toContain(byOther.status);
      expect(byOther.text).not.toContain(t.admin.email);
      if (op.path.includes("{id}")) expect(byOther.status, `${op.method} ${op.path} as tenant B`).toBe(404);
    }
    // The admin's session survived tenant B's attempts.
    expect((await t.api("GET", "/api/organizations", { token: t.admin.token })).status).toBe(200);
  });
});

describe("keys never exceed their creator", () => {
  it("a key cannot create a key with a bit or a role it lacks", async () => {
    const limited = await createKey(t, t.admin.token, {
      name: "limited",
      role: "manager",
      permissions: { devices: PERM.get, accesstokens: ALL },
    });
    const more = await t.api<{ code: string; details: { path: string }[] }>("POST", "/api/accesstokens", {
      token: limited,
      body: { name: "wider", role: "manager", permissions: { devices: PERM.get | PERM.post } },
    });
    expect(more.status).toBe(403);
    expect(more.body.code).toBe("FORBIDDEN");
    expect(more.body.details.map((d) => d.path)).toContain("permissions.devices");

    const higherRole = await t.api("POST", "/api/accesstokens", {
      token: limited,
      body: { name: "owner", role: "owner", permissions: { devices: PERM.get } },
    });
    expect(higherRole.status).toBe(403);

    const same = await t.api<{ permissions: Record<string, number>; token: string }>("POST", "/api/accesstokens", {
      token: limited,
      body: { name: "narrower", role: "viewer", permissions: { devices: PERM.get } },
    });
    expect(same.status).toBe(201);
    expect(same.body.permissions.devices).toBe(PERM.get);
  });

  it("a manager cannot create an owner key, nor a key with account rights", async () => {
    const res = await t.api<{ code: string }>("POST", "/api/accesstokens", {
      token: manager.token,
      body: { name: "sneaky", role: "manager", permissions: { accounts: ALL } },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
  });

  it("a key loses the rights its creator loses", async () => {
    const creator = await t.addMember("manager");
    const key = await createKey(t, creator.token, { name: "creator-bound", role: "manager" });
    expect((await t.api("GET", "/api/accesstokens", { token: key })).status).toBe(200);
    const members = await t.api<{ id: string; user: { id: string } }[]>("GET", "/api/members", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "user.id", op: "==", val: creator.id }]) },
    });
    const membership = members.body[0]!;
    expect((await t.api("PUT", `/api/members/${membership.id}`, { token: t.admin.token, body: { role: "viewer" } })).status).toBe(
      200,
    );
    // Viewers have no access-token rights: neither has the key any more.
    expect((await t.api("GET", "/api/accesstokens", { token: key })).status).toBe(403);
    // Removed from the organization: the key authenticates but may do nothing.
    expect((await t.api("DELETE", `/api/members/${membership.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", "/api/organizations", { token: key })).status).toBe(403);
  });
});
