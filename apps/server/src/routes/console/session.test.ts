/**
 * The console's cookie session: sign-in sets an HttpOnly SameSite=Strict
 * cookie that every /api route accepts as the user; unsafe requests need the
 * CSRF token; logout and a password change end it; bearer requests unchanged.
 */
import type { ConsoleSession } from "@tern/protocol";
import { generate } from "otplib";
import { describe, expect, it } from "vitest";
import { ADMIN_EMAIL, ADMIN_PASSWORD, useTestServer } from "../../../test/support/test-server.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";

type ErrorBody = { code: string };
const t = useTestServer();

async function signIn(username: string, password: string) {
  const res = await t.api<ConsoleSession>("POST", "/api/console/session", { body: { username, password } });
  expect(res.status, res.text).toBe(200);
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith("tern_console="));
  expect(setCookie).toBeDefined();
  return { cookie: setCookie!.split(";")[0]!, setCookie: setCookie!, session: res.body };
}

describe("console session", () => {
  it("sign-in sets an HttpOnly SameSite=Strict cookie stored hashed, and answers the user, organizations and a CSRF token", async () => {
    const { cookie, setCookie, session } = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/i);
    expect(session.user.email).toBe(ADMIN_EMAIL);
    expect(session.organizations).toContainEqual(expect.objectContaining({ id: t.admin.orgId, role: "owner" }));
    expect(session.defaultOrgId).toBe(t.admin.orgId);
    expect(session.csrfToken.length).toBeGreaterThan(20);
    // At rest only the hash of the cookie's secret.
    const secret = decodeURIComponent(cookie.slice("tern_console=".length));
    const rows = await t.database.db.selectFrom("sessions").select("refresh_hash").execute();
    expect(rows.map((r) => r.refresh_hash)).toContain(hashSecretToken(secret));
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it("wrong password: the login route's answer (401 UNAUTHENTICATED), no cookie", async () => {
    const res = await t.api<ErrorBody>("POST", "/api/console/session", { body: { username: ADMIN_EMAIL, password: "nope" } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHENTICATED");
    expect(res.headers.getSetCookie()).toEqual([]);
    const unknownField = await t.api<ErrorBody>("POST", "/api/console/session", {
      body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD, remember: true },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.code).toBe("VALIDATION_FAILED");
  });

  it("the cookie works on a list route and GET /console/session; no cookie is 401", async () => {
    const { cookie } = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const devices = await t.api("GET", "/api/devices", { headers: { cookie } });
    expect(devices.status, devices.text).toBe(200);
    const again = await t.api<ConsoleSession>("GET", "/api/console/session", { headers: { cookie } });
    expect(again.status).toBe(200);
    expect(again.body.user.email).toBe(ADMIN_EMAIL);
    const none = await t.api<ErrorBody>("GET", "/api/console/session");
    expect(none.status).toBe(401);
    expect(none.body.code).toBe("UNAUTHENTICATED");
    const forged = await t.api<ErrorBody>("GET", "/api/devices", { headers: { cookie: "tern_console=tern_rt_forged" } });
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe("UNAUTHENTICATED");
  });

  it("unsafe requests with the cookie need the CSRF token: none or a wrong one is 403 CSRF_FAILED, the right one passes", async () => {
    const { cookie, session } = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const other = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const body = { name: `csrf-${Date.now()}` };
    for (const token of [undefined, "", "x.y", `${session.csrfToken}x`, other.session.csrfToken]) {
      const res = await t.api<ErrorBody>("POST", "/api/pathlabels", {
        headers: { cookie, ...(token === undefined ? {} : { "x-csrf-token": token }) },
        body,
      });
      expect(res.status, `token ${token}: ${res.text}`).toBe(403);
      expect(res.body.code).toBe("CSRF_FAILED");
    }
    const none = await t.database.db.selectFrom("path_labels").select("id").where("name", "=", body.name).execute();
    expect(none).toEqual([]);
    const ok = await t.api("POST", "/api/pathlabels", { headers: { cookie, "x-csrf-token": session.csrfToken }, body });
    expect(ok.status, ok.text).toBe(201);
    // A token from a later GET works too (several tabs).
    const fresh = await t.api<ConsoleSession>("GET", "/api/console/session", { headers: { cookie } });
    const ok2 = await t.api("POST", "/api/pathlabels", {
      headers: { cookie, "x-csrf-token": fresh.body.csrfToken },
      body: { name: `${body.name}-2` },
    });
    expect(ok2.status, ok2.text).toBe(201);
  });

  it("bearer requests are unchanged: no CSRF header needed, and a bearer wins over a cookie", async () => {
    const res = await t.api("POST", "/api/pathlabels", { token: t.admin.token, body: { name: `bearer-${Date.now()}` } });
    expect(res.status, res.text).toBe(201);
    const bad = await t.api<ErrorBody>("GET", "/api/devices", {
      token: "not-a-token",
      headers: { cookie: (await signIn(ADMIN_EMAIL, ADMIN_PASSWORD)).cookie },
    });
    expect(bad.status).toBe(401);
  });

  it("DELETE /console/session needs the CSRF token, revokes the session and clears the cookie", async () => {
    const { cookie, session } = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const forged = await t.api<ErrorBody>("DELETE", "/api/console/session", { headers: { cookie } });
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe("CSRF_FAILED");
    const res = await t.api("DELETE", "/api/console/session", { headers: { cookie, "x-csrf-token": session.csrfToken } });
    expect(res.status, res.text).toBe(204);
    expect(res.headers.getSetCookie().join()).toMatch(/tern_console=;.*Max-Age=0/i);
    const after = await t.api<ErrorBody>("GET", "/api/devices", { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("UNAUTHENTICATED");
    expect((await t.api("GET", "/api/console/session", { headers: { cookie } })).status).toBe(401);
  });

  it("a password change ends the cookie's session", async () => {
    const member = await t.addMember("manager");
    const { cookie, session } = await signIn(member.email, member.password);
    const change = await t.api("POST", "/api/users/password", {
      headers: { cookie, "x-csrf-token": session.csrfToken },
      body: { currentPassword: member.password, newPassword: "a brand new passphrase 42" },
    });
    expect(change.status, change.text).toBeLessThan(300);
    const after = await t.api<ErrorBody>("GET", "/api/devices", { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe("UNAUTHENTICATED");
  });

  it("another tenant's organization is refused with the cookie, and nothing of it leaks", async () => {
    const other = await t.createTenant("Other");
    const { cookie } = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const res = await t.api("GET", "/api/devices", { headers: { cookie }, query: { org: other.orgId } });
    expect([403, 404]).toContain(res.status);
    expect(res.text).not.toContain(other.email);
    const theirs = await signIn(other.email, other.password);
    expect(theirs.session.organizations.map((o) => o.id)).toEqual([other.orgId]);
  });

  it("a user with 2FA gets the login route's challenge, then signs in with the code", async () => {
    const member = await t.addMember("viewer");
    const started = await t.api<{ secret: string }>("POST", "/api/users/me/mfa/enrol", {
      token: member.token,
      body: { password: member.password },
    });
    expect(started.status, started.text).toBe(201);
    const confirmed = await t.api<{ recoveryCodes: string[] }>("POST", "/api/users/me/mfa/confirm", {
      token: member.token,
      body: { code: await generate({ secret: started.body.secret }) },
    });
    expect(confirmed.status, confirmed.text).toBe(200);
    const first = await t.api<{ mfaRequired: boolean; challenge: string }>("POST", "/api/console/session", {
      body: { username: member.email, password: member.password },
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.mfaRequired).toBe(true);
    expect(first.headers.getSetCookie()).toEqual([]);
    const second = await t.api<ConsoleSession>("POST", "/api/console/session", {
      body: { challenge: first.body.challenge, recoveryCode: confirmed.body.recoveryCodes[0] },
    });
    expect(second.status, second.text).toBe(200);
    expect(second.body.user.email).toBe(member.email);
    expect(second.headers.getSetCookie().some((c) => c.startsWith("tern_console="))).toBe(true);
  });
});
