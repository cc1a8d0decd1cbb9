/** POST /api/users/password: own password change; everything of the user revoked; throttled; users only. */
import type { TokenPair } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { createTestServer, useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string }[] };

describe("POST /api/users/password", () => {
  const t = useTestServer();

  it("changes the password, revokes every session and access token, answers a fresh session", async () => {
    const member = await t.addMember("owner");
    const other = await t.login(member.email, member.password);
    const key = await t.api<{ id: string; token: string }>("POST", "/api/accesstokens", {
      token: member.token,
      body: { name: "member key", role: "viewer" },
    });
    expect(key.status).toBe(201);

    const res = await t.api<TokenPair>("POST", "/api/users/password", {
      token: member.token,
      body: { currentPassword: member.password, newPassword: "a brand new password" },
    });
    expect(res.status).toBe(200);
    expect(res.body.refreshToken).toMatch(/^tern_rt_/);
    // The fresh session works; every earlier credential is dead.
    expect((await t.api("GET", "/api/organizations", { token: res.body.accessToken })).status).toBe(200);
    for (const token of [member.token, other.accessToken, key.body.token])
      expect((await t.api("GET", "/api/organizations", { token })).status).toBe(401);
    for (const refreshToken of [member.refreshToken, other.refreshToken])
      expect((await t.api("POST", "/api/users/refresh", { body: { refreshToken } })).status).toBe(401);
    // Old password out, new one in.
    expect(
      (await t.api("POST", "/api/users/login", { body: { username: member.email, password: member.password } })).status,
    ).toBe(401);
    await t.login(member.email, "a brand new password");

    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "resource", "resource_id", "actor"])
      .where((eb) => eb.or([eb("resource_id", "=", member.id), eb("resource_id", "=", key.body.id)]))
      .execute();
    expect(audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: "password_change", resource: "users", actor: member.email }),
        expect.objectContaining({ action: "revoke", resource: "accesstokens", resource_id: key.body.id }),
      ]),
    );
    const dump = JSON.stringify(await t.database.db.selectFrom("audit_log").selectAll().execute());
    expect(dump).not.toContain("a brand new password");
  });

  it("a wrong current password is 400 on currentPassword and changes nothing", async () => {
    const member = await t.addMember("viewer");
    const res = await t.api<ErrorBody>("POST", "/api/users/password", {
      token: member.token,
      body: { currentPassword: "not the password", newPassword: "a brand new password" },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details[0]?.path).toBe("currentPassword");
    expect((await t.api("GET", "/api/organizations", { token: member.token })).status).toBe(200);
    await t.login(member.email, member.password);
  });

  it("validates the body: a short new password and unknown fields are 400", async () => {
    const member = await t.addMember("viewer");
    const short = await t.api<ErrorBody>("POST", "/api/users/password", {
      token: member.token,
      body: { currentPassword: member.password, newPassword: "short" },
    });
    expect(short.status).toBe(400);
    expect(short.body.details[0]?.path).toBe("newPassword");
    const unknown = await t.api<ErrorBody>("POST", "/api/users/password", {
      token: member.token,
      body: { currentPassword: member.password, newPassword: "a brand new password", userId: t.admin.id },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("VALIDATION_FAILED");
    await t.login(member.email, member.password);
  });

  it("needs a login session: no token 401, an access token 403", async () => {
    const body = { currentPassword: t.admin.password, newPassword: "a brand new password" };
    const none = await t.api<ErrorBody>("POST", "/api/users/password", { body });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe("UNAUTHENTICATED");
    const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "owner key", role: "owner" },
    });
    const byKey = await t.api<ErrorBody>("POST", "/api/users/password", { token: key.body.token, body });
    expect(byKey.status).toBe(403);
    expect(byKey.body.code).toBe("FORBIDDEN");
    await t.login(t.admin.email, t.admin.password);
  });
});

describe("POST /api/users/password throttling", () => {
  it("guessing the current password backs off like a login (429 RATE_LIMITED)", async () => {
    const t = await createTestServer({ TERN_LOGIN_RATE_USER: "2", TERN_LOGIN_RATE_IP: "1000" });
    try {
      const member = await t.addMember("viewer");
      const guess = () =>
        t.api<ErrorBody>("POST", "/api/users/password", {
          token: member.token,
          body: { currentPassword: "a guess", newPassword: "a brand new password" },
        });
      expect((await guess()).status).toBe(400);
      expect((await guess()).status).toBe(400);
      const limited = await guess();
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe("RATE_LIMITED");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});
