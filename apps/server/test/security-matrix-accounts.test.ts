/**
 * The security matrix across accounts (sibling of security-matrix.test.ts):
 * accounts are isolated from one another like organizations. An account made
 * through self-service sign-up, whose owner has account-wide rights, aims
 * every protected route of the OpenAPI document at the first account: at its
 * default organization and at a second organization of that account, with
 * that account's resource ids in the path. Every answer is 403 or 404 with
 * nothing of the first account in the body. And the first account's owner
 * (an installation administrator) cannot reach the signed-up account either.
 */
import type { Account } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TernAuthExtension } from "../src/http/route.ts";
import { type Mailbox, startMailbox, tokenIn } from "./support/mailbox.ts";
import { type Fixture, SECURITY_FIXTURES } from "./support/security-fixtures.ts";
import { createTestServer, type TestServer } from "./support/test-server.ts";

interface Operation {
  method: string;
  path: string;
  auth: TernAuthExtension;
}
type Protected = Operation & { auth: Extract<TernAuthExtension, { resource: string }> };

let t: TestServer;
let mailbox: Mailbox;
let operations: Protected[] = [];
/** The signed-up account: its owner's session and an owner-role key, its organization and account ids. */
const other = { token: "", key: "", orgId: "", accountId: "", email: "owner@signed-up.example" };
let secondOrgId = "";
let secondOrgName = "";

beforeAll(async () => {
  mailbox = await startMailbox();
  t = await createTestServer({ TERN_SMTP_URL: mailbox.url, TERN_SIGNUP_ENABLED: "true" });
  const doc = (
    await t.api<{ paths: Record<string, Record<string, { "x-tern-auth": TernAuthExtension }>> }>("GET", "/api/openapi.json")
  ).body;
  operations = Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, auth: op["x-tern-auth"] })))
    .filter((op): op is Protected => "resource" in op.auth);

  const password = "signed up password";
  const up = await t.api("POST", "/api/accounts/signup", {
    body: { email: other.email, password, name: "Other Owner", organizationName: "Signed Up Ltd" },
  });
  if (up.status !== 202) throw new Error(up.text);
  const created = await t.api<{ account: Account; organizationId: string }>("POST", "/api/accounts/signup/verify", {
    body: { token: tokenIn(await mailbox.waitFor(other.email)) },
  });
  if (created.status !== 201) throw new Error(created.text);
  other.accountId = created.body.account.id;
  other.orgId = created.body.organizationId;
  other.token = (await t.login(other.email, password)).accessToken;
  const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
    token: other.token,
    body: { name: "other-owner-key", role: "owner" },
  });
  if (key.status !== 201) throw new Error(key.text);
  other.key = key.body.token;

  secondOrgName = `Second of first account ${Date.now()}`;
  const second = await t.api<{ id: string }>("POST", "/api/organizations", {
    token: t.admin.token,
    body: { name: secondOrgName },
  });
  if (second.status !== 201) throw new Error(second.text);
  secondOrgId = second.body.id;
});
afterAll(async () => {
  await t?.close();
  await mailbox?.stop();
});

async function call(op: Protected, token: string, fixture: Fixture, org?: string) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => fixture.params[name] ?? crypto.randomUUID());
  const usesOrgQuery = !op.auth.orgParam && !op.auth.accountParam;
  return t.api(op.method.toUpperCase(), path, {
    token,
    query: { org: usesOrgQuery ? org : undefined },
    body: ["post", "put", "patch"].includes(op.method) ? (fixture.bodies?.[op.method] ?? {}) : undefined,
  });
}

describe("security matrix across accounts", () => {
  it("covers the protected routes, account-scoped ones included", () => {
    expect(operations.length).toBeGreaterThanOrEqual(15);
    expect(operations.some((op) => op.auth.scope === "account")).toBe(true);
  });

  // Six requests per route (two callers, three organizations): more than the default time on a loaded machine.
  it("a signed-up account's owner and key → 403/404 on every route aimed at the first account, nothing of it in the body", {
    timeout: 180_000,
  }, async () => {
    for (const op of operations) {
      const fixture = (await SECURITY_FIXTURES[op.path]?.(t)) ?? { params: {} };
      const secrets = [
        t.admin.orgId,
        t.admin.accountId,
        secondOrgId,
        secondOrgName,
        t.admin.email,
        ...Object.values(fixture.params),
      ];
      for (const [who, token] of [
        ["signed-up owner", other.token],
        ["signed-up owner key", other.key],
      ] as const) {
        for (const org of [t.admin.orgId, secondOrgId, undefined]) {
          // Without `org` the caller acts in its own organization: only a path naming the first account's resources is foreign.
          if (org === undefined && Object.keys(fixture.params).length === 0) continue;
          const res = await call(op, token, fixture, org);
          const label = `${op.method} ${op.path} as ${who} in ${org ?? "its own org"}`;
          expect([403, 404], `${label}: ${res.text}`).toContain(res.status);
          for (const s of secrets) expect(res.text, label).not.toContain(s);
        }
      }
    }
  });

  it("the first account's owner (an installation administrator) cannot reach the signed-up account", async () => {
    const accounts = await t.api<Account[]>("GET", "/api/accounts", { token: t.admin.token });
    expect(accounts.status).toBe(200);
    expect(accounts.body.map((a) => a.id)).not.toContain(other.accountId);
    for (const [method, path, body] of [
      ["PUT", `/api/accounts/${other.accountId}`, { country: "FR" }],
      ["GET", `/api/organizations/${other.orgId}`, undefined],
      ["PUT", `/api/organizations/${other.orgId}`, { description: "taken over" }],
      ["DELETE", `/api/organizations/${other.orgId}`, undefined],
    ] as const) {
      const res = await t.api(method, path, { token: t.admin.token, body });
      expect([403, 404], `${method} ${path}: ${res.text}`).toContain(res.status);
      expect(res.text).not.toContain("Signed Up Ltd");
    }
    for (const path of ["/api/devices", "/api/members", "/api/audit", "/api/tokens"]) {
      const res = await t.api("GET", path, { token: t.admin.token, query: { org: other.orgId } });
      expect([403, 404], `${path}?org=<signed-up org>: ${res.text}`).toContain(res.status);
      // The route exists and answers the account's own owner.
      expect((await t.api("GET", path, { token: other.token, query: { org: other.orgId } })).status, path).toBe(200);
    }
    const still = await t.api<Account[]>("GET", "/api/accounts", { token: other.token });
    expect(still.body).toEqual([expect.objectContaining({ id: other.accountId, name: "Signed Up Ltd", country: "" })]);
  });
});
