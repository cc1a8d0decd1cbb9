/** Sessions: a user lists and revokes their own (/users/sessions); an owner those of members (/members/{id}/sessions). */
import type { Session } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string };

const sidOf = (jwt: string) => (JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as { sid: string }).sid;

describe("own sessions", () => {
  const t = useTestServer();

  it("lists the caller's active sessions with the current one marked; revoking one ends it at once", async () => {
    const member = await t.addMember("viewer");
    const second = await t.login(member.email, member.password);
    const list = await t.api<Session[]>("GET", "/api/users/sessions", {
      token: member.token,
      headers: { "user-agent": "tests" },
    });
    expect(list.status).toBe(200);
    expect(list.body.map((s) => s.id).sort()).toEqual([sidOf(member.token), sidOf(second.accessToken)].sort());
    expect(list.body.find((s) => s.current)?.id).toBe(sidOf(member.token));
    expect(list.text).not.toContain("tern_rt_");

    expect((await t.api("DELETE", `/api/users/sessions/${sidOf(second.accessToken)}`, { token: member.token })).status).toBe(204);
    expect((await t.api("GET", "/api/organizations", { token: second.accessToken })).status).toBe(401);
    expect((await t.api("POST", "/api/users/refresh", { body: { refreshToken: second.refreshToken } })).status).toBe(401);
    expect((await t.api("GET", "/api/organizations", { token: member.token })).status).toBe(200);
    const after = await t.api<Session[]>("GET", "/api/users/sessions", { token: member.token });
    expect(after.body.map((s) => s.id)).toEqual([sidOf(member.token)]);

    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "actor"])
      .where("resource", "=", "sessions")
      .where("resource_id", "=", sidOf(second.accessToken))
      .execute();
    expect(audit).toEqual([{ action: "revoke", actor: member.email }]);
  });

  it("another user's session, an unknown one and a revoked one are 404; a bad id is 400", async () => {
    const a = await t.addMember("viewer");
    const b = await t.addMember("viewer");
    const res = await t.api<ErrorBody>("DELETE", `/api/users/sessions/${sidOf(b.token)}`, { token: a.token });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
    expect((await t.api("GET", "/api/organizations", { token: b.token })).status).toBe(200);
    expect((await t.api("DELETE", `/api/users/sessions/${crypto.randomUUID()}`, { token: a.token })).status).toBe(404);
    const bad = await t.api<ErrorBody>("DELETE", "/api/users/sessions/not-a-uuid", { token: a.token });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("VALIDATION_FAILED");
  });

  it("needs a login session: no token 401, an access token 403", async () => {
    expect((await t.api("GET", "/api/users/sessions")).status).toBe(401);
    const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "k", role: "owner" },
    });
    const res = await t.api<ErrorBody>("GET", "/api/users/sessions", { token: key.body.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
  });
});

describe("members' sessions (owners)", () => {
  const t = useTestServer();

  it("an owner lists a member's sessions and revokes one; the member is signed out of it at once", async () => {
    const member = await t.addMember("manager");
    const list = await t.api<Session[]>("GET", `/api/members/${member.membershipId}/sessions`, { token: t.admin.token });
    expect(list.status).toBe(200);
    expect(list.body.map((s) => s.id)).toEqual([sidOf(member.token)]);
    const res = await t.api("DELETE", `/api/members/${member.membershipId}/sessions/${sidOf(member.token)}`, {
      token: t.admin.token,
    });
    expect(res.status).toBe(204);
    expect((await t.api("GET", "/api/organizations", { token: member.token })).status).toBe(401);
    const audit = await t.api<{ action: string; resource: string; actor: string }[]>("GET", "/api/audit", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "resourceId", op: "==", val: sidOf(member.token) }]) },
    });
    expect(audit.body).toEqual([expect.objectContaining({ action: "revoke", resource: "sessions", actor: t.admin.email })]);
    // Revoked already, or not this member's: 404.
    expect(
      (await t.api("DELETE", `/api/members/${member.membershipId}/sessions/${sidOf(member.token)}`, { token: t.admin.token }))
        .status,
    ).toBe(404);
    expect(
      (await t.api("DELETE", `/api/members/${member.membershipId}/sessions/${sidOf(t.admin.token)}`, { token: t.admin.token }))
        .status,
    ).toBe(404);
  });

  it("managers and viewers may not; an org owner may not touch an account-wide member's sessions", async () => {
    const target = await t.addMember("viewer");
    for (const role of ["viewer", "manager"] as const) {
      const user = await t.addMember(role);
      const res = await t.api<ErrorBody>("GET", `/api/members/${target.membershipId}/sessions`, { token: user.token });
      expect(res.status, role).toBe(403);
      const del = await t.api("DELETE", `/api/members/${target.membershipId}/sessions/${sidOf(target.token)}`, {
        token: user.token,
      });
      expect(del.status, role).toBe(403);
    }
    const orgOwner = await t.addMember("owner");
    const accountWide = await t.addMember("manager", { scope: "account" });
    const res = await t.api<ErrorBody>("GET", `/api/members/${accountWide.membershipId}/sessions`, { token: orgOwner.token });
    expect(res.status).toBe(403);
    const del = await t.api("DELETE", `/api/members/${accountWide.membershipId}/sessions/${sidOf(accountWide.token)}`, {
      token: orgOwner.token,
    });
    expect(del.status).toBe(403);
    expect((await t.api("GET", "/api/organizations", { token: accountWide.token })).status).toBe(200);
    // The org owner may for an org member.
    expect((await t.api("GET", `/api/members/${target.membershipId}/sessions`, { token: orgOwner.token })).status).toBe(200);
  });

  it("another tenant's owner gets 404 for this tenant's members", async () => {
    const target = await t.addMember("viewer");
    const other = await t.createTenant("Other");
    expect((await t.api("GET", `/api/members/${target.membershipId}/sessions`, { token: other.token })).status).toBe(404);
    expect(
      (await t.api("DELETE", `/api/members/${target.membershipId}/sessions/${sidOf(target.token)}`, { token: other.token }))
        .status,
    ).toBe(404);
    expect((await t.api("GET", "/api/organizations", { token: target.token })).status).toBe(200);
  });
});
