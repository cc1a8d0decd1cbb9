/**
 * Path parameters for the security matrix: for a route path, a function that
 * creates a resource in the admin's organization (tenant A) and returns the
 * values of the path's parameters, and optionally a valid body per method (so
 * another tenant's request gets past validation to the lookup that must fail).
 * The matrix then checks that another tenant cannot reach that real resource.
 * Paths without an entry get random ids (authorization still runs before the
 * lookup, so the other checks apply).
 *
 * Issue-4 helpers: add an entry for each new `{id}` path of your resources.
 */
import type { TestServer } from "./test-server.ts";

export interface Fixture {
  params: Record<string, string>;
  /** A valid body by method ("put", "post" …) for routes that take one. */
  bodies?: Record<string, unknown>;
}
export type FixtureFactory = (t: TestServer) => Promise<Fixture>;

export const SECURITY_FIXTURES: Record<string, FixtureFactory> = {
  "/api/organizations/{id}": async (t) => ({ params: { id: t.admin.orgId }, bodies: { put: { description: "x" } } }),
  "/api/accounts/{id}": async (t) => ({ params: { id: t.admin.accountId }, bodies: { put: { country: "NL" } } }),
  "/api/members/{id}": async (t) => {
    const res = await t.api<{ id: string }>("POST", "/api/members", {
      token: t.admin.token,
      body: { email: `fixture-${Date.now()}-${Math.random()}@example.com`, password: "fixture password", role: "viewer" },
    });
    if (res.status !== 201) throw new Error(`member fixture: ${res.status} ${res.text}`);
    return { params: { id: res.body.id }, bodies: { put: { role: "manager" } } };
  },
  "/api/accesstokens/{id}": async (t) => {
    const res = await t.api<{ id: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: `fixture-${Date.now()}`, role: "viewer" },
    });
    if (res.status !== 201) throw new Error(`access token fixture: ${res.status} ${res.text}`);
    return { params: { id: res.body.id } };
  },
};
