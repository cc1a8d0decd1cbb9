/** /api/accounts: list with trial_end, update by account owners only. */
import type { Account } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";

describe("accounts", () => {
  const t = useTestServer();

  it("GET lists the caller's accounts with trial_end", async () => {
    const res = await t.api<Account[]>("GET", "/api/accounts", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({ id: t.admin.accountId, name: "Default account", trial_end: null });
    expect(Object.keys(res.body[0]!)).toContain("trial_end");
  });

  it("an organization member sees the organization's account; another tenant does not", async () => {
    const viewer = await t.addMember("viewer");
    const res = await t.api<Account[]>("GET", "/api/accounts", { token: viewer.token });
    expect(res.body.map((a) => a.id)).toEqual([t.admin.accountId]);
    const other = await t.createTenant("Other");
    const theirs = await t.api<Account[]>("GET", "/api/accounts", { token: other.token });
    expect(theirs.body.map((a) => a.id)).toEqual([other.accountId]);
  });

  it("PUT changes the account for its owner; organization owners and managers get 403", async () => {
    const res = await t.api<Account>("PUT", `/api/accounts/${t.admin.accountId}`, {
      token: t.admin.token,
      body: { name: "ACME", country: "NL", companyType: "ISP" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "ACME", country: "NL", companyType: "ISP" });
    for (const role of ["owner", "manager"] as const) {
      const user = await t.addMember(role);
      expect((await t.api("PUT", `/api/accounts/${t.admin.accountId}`, { token: user.token, body: { name: "x" } })).status).toBe(
        403,
      );
    }
  });

  it("PUT validates the body", async () => {
    const res = await t.api<{ code: string }>("PUT", `/api/accounts/${t.admin.accountId}`, {
      token: t.admin.token,
      body: { country: "Netherlands" },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
  });
});
