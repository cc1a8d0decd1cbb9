/** /api/members: list, change role, remove; account-wide memberships; the last owner stays (joining: invitations). */
import type { Membership } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string }[] };

describe("members", () => {
  const t = useTestServer();

  it("GET lists the account owner (account scope) and organization members", async () => {
    await t.addMember("viewer", { email: "viewer@example.com" });
    const res = await t.api<Membership[]>("GET", "/api/members", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(res.body.find((m) => m.user.email === t.admin.email)).toMatchObject({
      scope: "account",
      role: "owner",
      scopeId: t.admin.accountId,
    });
    expect(res.body.find((m) => m.user.email === "viewer@example.com")).toMatchObject({
      scope: "organization",
      role: "viewer",
      scopeId: t.admin.orgId,
    });
    expect(res.headers.get("records-total")).toBe(String(res.body.length));
  });

  it("PUT changes a role; the member's rights follow at once", async () => {
    const user = await t.addMember("viewer");
    expect((await t.api("GET", "/api/audit", { token: user.token })).status).toBe(403);
    const list = await t.api<Membership[]>("GET", "/api/members", { token: t.admin.token });
    const m = list.body.find((x) => x.user.id === user.id)!;
    const res = await t.api<Membership>("PUT", `/api/members/${m.id}`, { token: t.admin.token, body: { role: "manager" } });
    expect(res.status).toBe(200);
    expect(res.body.role).toBe("manager");
    expect((await t.api("GET", "/api/audit", { token: user.token })).status).toBe(200);
  });

  it("only account owners manage account-wide memberships", async () => {
    const orgOwner = await t.addMember("owner");
    const res = await t.api<ErrorBody>("POST", "/api/invitations", {
      token: orgOwner.token,
      body: { email: "acct@example.com", role: "viewer", scope: "account" },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
    const list = await t.api<Membership[]>("GET", "/api/members", { token: orgOwner.token });
    const adminMembership = list.body.find((x) => x.user.email === t.admin.email)!;
    expect(
      (await t.api("PUT", `/api/members/${adminMembership.id}`, { token: orgOwner.token, body: { role: "viewer" } })).status,
    ).toBe(403);
    expect((await t.api("DELETE", `/api/members/${adminMembership.id}`, { token: orgOwner.token })).status).toBe(403);

    const accountWide = await t.addMember("manager", { scope: "account" });
    const listed = await t.api<Membership[]>("GET", "/api/members", { token: t.admin.token });
    expect(listed.body.find((m) => m.id === accountWide.membershipId)).toMatchObject({
      scope: "account",
      scopeId: t.admin.accountId,
      role: "manager",
    });
  });

  it("there is no POST /members any more: members join by invitation", async () => {
    const res = await t.api("POST", "/api/members", {
      token: t.admin.token,
      body: { email: "direct@example.com", password: "a long password", role: "viewer" },
    });
    expect(res.status).toBe(404);
    const users = await t.database.db.selectFrom("users").select("id").where("email", "=", "direct@example.com").execute();
    expect(users).toHaveLength(0);
  });

  it("an account keeps at least one owner", async () => {
    const list = await t.api<Membership[]>("GET", "/api/members", { token: t.admin.token });
    const adminMembership = list.body.find((x) => x.user.email === t.admin.email)!;
    const demote = await t.api<ErrorBody>("PUT", `/api/members/${adminMembership.id}`, {
      token: t.admin.token,
      body: { role: "manager" },
    });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe("CONFLICT");
    expect((await t.api("DELETE", `/api/members/${adminMembership.id}`, { token: t.admin.token })).status).toBe(409);

    // With a second account owner, the first may step down.
    await t.addMember("owner", { scope: "account", email: "second-owner@example.com" });
    const ok = await t.api<Membership>("PUT", `/api/members/${adminMembership.id}`, {
      token: t.admin.token,
      body: { role: "owner" },
    });
    expect(ok.status).toBe(200);
  });

  it("DELETE removes a membership of this organization only", async () => {
    const user = await t.addMember("viewer");
    const list = await t.api<Membership[]>("GET", "/api/members", { token: t.admin.token });
    const m = list.body.find((x) => x.user.id === user.id)!;
    expect((await t.api("DELETE", `/api/members/${m.id}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("DELETE", `/api/members/${m.id}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api("GET", "/api/organizations", { token: user.token })).status).toBe(403);
  });
});
