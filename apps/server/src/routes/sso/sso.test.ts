/**
 * Single sign-on against a real OpenID provider (oidc-provider on loopback):
 * provider settings, the authorization-code flow with PKCE driven over HTTP
 * through the provider's login and consent pages, member matching and joining,
 * and what a hostile provider, browser or caller cannot do.
 */
import type { MfaChallenge, SsoProvider, TokenPair } from "@tern/protocol";
import { sql } from "kysely";
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browseProvider, startTestIdp, type TestIdp } from "../../../test/support/oidc-provider.ts";
import { type ApiResponse, type TestServer, useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string };
const PUBLIC_URL = "http://tern.test";
const CALLBACK = `${PUBLIC_URL}/api/sso/callback`;

describe("single sign-on with OpenID Connect", () => {
  const t = useTestServer({ TERN_PUBLIC_URL: PUBLIC_URL, TERN_SSO_ALLOW_HTTP_ISSUER: "true" });
  let idp: TestIdp;
  let provider: SsoProvider;

  beforeAll(async () => {
    idp = await startTestIdp(CALLBACK);
    const res = await t.api<SsoProvider>("POST", "/api/sso/providers", {
      token: t.admin.token,
      body: {
        name: "Corp IdP",
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        allowedDomains: ["Corp.Example"],
        defaultRole: "manager",
      },
    });
    expect(res.status, res.text).toBe(201);
    provider = res.body;
  });
  afterAll(async () => {
    await idp?.close();
  });

  /** Start at Tern, sign in at the provider as `accountId`, come back to Tern's callback with the browser's cookie. */
  async function signIn<T = TokenPair>(
    accountId: string,
    options: { cookie?: string | null; abort?: boolean; providerId?: string } = {},
  ): Promise<ApiResponse<T> & { callback: URL }> {
    const start = await t.api("GET", `/api/sso/providers/${options.providerId ?? provider.id}/start`);
    expect(start.status, start.text).toBe(302);
    const setCookie = start.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/tern_sso=[^;]+;.*HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    const location = new URL(start.headers.get("location")!);
    expect(location.origin).toBe(idp.issuer);
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    for (const p of ["state", "nonce", "code_challenge"]) expect(location.searchParams.get(p)).toBeTruthy();
    expect(location.searchParams.get("redirect_uri")).toBe(CALLBACK);

    const callback = await browseProvider(location.href, CALLBACK, accountId, options.abort);
    const cookie = options.cookie === undefined ? setCookie.split(";")[0]! : options.cookie;
    const res = await t.api<T>("GET", callback.pathname + callback.search, { headers: cookie ? { cookie } : {} });
    return { ...res, callback };
  }

  describe("provider settings", () => {
    it("create answers the redirect URI and never the secret; the secret is encrypted at rest", async () => {
      expect(provider).toMatchObject({ allowedDomains: ["corp.example"], defaultRole: "manager", enabled: true });
      expect(provider.redirectUri).toBe(CALLBACK);
      expect(JSON.stringify(provider)).not.toContain(idp.clientSecret);
      const list = await t.api<SsoProvider[]>("GET", "/api/sso/providers", { token: t.admin.token });
      expect(list.body.map((p) => p.id)).toContain(provider.id);
      expect(list.text).not.toContain(idp.clientSecret);
      const rows = await sql<{ j: string }>`select row_to_json(p)::text as j from sso_providers p`.execute(t.database.db);
      expect(JSON.stringify(rows.rows)).not.toContain(idp.clientSecret);
      const audit = await t.api("GET", "/api/audit", { token: t.admin.token });
      expect(audit.text).not.toContain(idp.clientSecret);
    });

    it("update, get and delete; unknown fields, a typo and a non-https issuer are refused", async () => {
      const made = await t.api<SsoProvider>("POST", "/api/sso/providers", {
        token: t.admin.token,
        body: { name: "Spare", issuer: "https://idp.example.com", clientId: "x", clientSecret: "y" },
      });
      expect(made.status).toBe(201);
      const changed = await t.api<SsoProvider>("PUT", `/api/sso/providers/${made.body.id}`, {
        token: t.admin.token,
        body: { enabled: false, allowedDomains: ["example.org"], clientSecret: "rotated" },
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ enabled: false, allowedDomains: ["example.org"], name: "Spare" });
      const typo = await t.api<ErrorBody>("PUT", `/api/sso/providers/${made.body.id}`, {
        token: t.admin.token,
        body: { allowedDomain: ["example.org"] },
      });
      expect(typo.status).toBe(400);
      expect(typo.body.code).toBe("VALIDATION_FAILED");
      const badDomain = await t.api<ErrorBody>("POST", "/api/sso/providers", {
        token: t.admin.token,
        body: { name: "Bad", issuer: "https://idp.example.com", clientId: "x", clientSecret: "y", allowedDomains: ["@x"] },
      });
      expect(badDomain.status).toBe(400);
      const dup = await t.api<ErrorBody>("POST", "/api/sso/providers", {
        token: t.admin.token,
        body: { name: "Spare", issuer: "https://idp.example.com", clientId: "x", clientSecret: "y" },
      });
      expect(dup.status).toBe(409);
      expect(dup.body.code).toBe("CONFLICT");
      // A disabled provider cannot be started.
      const disabledStart = await t.api<ErrorBody>("GET", `/api/sso/providers/${made.body.id}/start`);
      expect(disabledStart.status).toBe(404);
      expect((await t.api("DELETE", `/api/sso/providers/${made.body.id}`, { token: t.admin.token })).status).toBe(204);
      expect((await t.api("GET", `/api/sso/providers/${made.body.id}`, { token: t.admin.token })).status).toBe(404);
    });

    it("only owners manage providers; account-wide joining only for account owners; other tenants see nothing", async () => {
      const manager = await t.addMember("manager");
      const body = { name: "Mine", issuer: "https://idp.example.com", clientId: "x", clientSecret: "y" };
      const byManager = await t.api<ErrorBody>("POST", "/api/sso/providers", { token: manager.token, body });
      expect(byManager.status).toBe(403);
      expect(byManager.body.code).toBe("FORBIDDEN");
      // A manager may read (members:get) but never sees the secret.
      const read = await t.api("GET", `/api/sso/providers/${provider.id}`, { token: manager.token });
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(idp.clientSecret);
      const orgOwner = await t.addMember("owner");
      const accountWide = await t.api<ErrorBody>("POST", "/api/sso/providers", {
        token: orgOwner.token,
        body: { ...body, membershipScope: "account" },
      });
      expect(accountWide.status).toBe(403);
      expect(accountWide.body.code).toBe("FORBIDDEN");
      const other = await t.createTenant("Other");
      const foreign = await t.api<ErrorBody>("GET", `/api/sso/providers/${provider.id}`, { token: other.token });
      expect(foreign.status).toBe(404);
      const foreignPut = await t.api("PUT", `/api/sso/providers/${provider.id}`, {
        token: other.token,
        body: { enabled: false },
      });
      expect(foreignPut.status).toBe(404);
    });
  });

  describe("sign-in", () => {
    it("an existing member signs in by verified e-mail and gets a session like a password login", async () => {
      const member = await t.addMember("viewer", { email: "alice@corp.example" });
      idp.accounts.set("alice", { email: "alice@corp.example", emailVerified: true });
      const res = await signIn("alice");
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ tokenType: "Bearer" });
      expect(res.body.refreshToken).toMatch(/^tern_rt_/);
      const me = await t.api<{ user: { id: string }; role: string }[]>("GET", "/api/members", { token: res.body.accessToken });
      expect(me.status).toBe(200);
      // The existing membership stands (viewer), no second one was made.
      const rows = await t.database.db.selectFrom("memberships").selectAll().where("user_id", "=", member.id).execute();
      expect(rows.map((r) => r.role)).toEqual(["viewer"]);
      const sessions = await t.database.db.selectFrom("sessions").select("id").where("user_id", "=", member.id).execute();
      expect(sessions.length).toBeGreaterThanOrEqual(2);
    });

    it("started from the console (?console=1): the callback sets the console cookie and redirects to /", async () => {
      await t.addMember("viewer", { email: "connie@corp.example" });
      idp.accounts.set("connie", { email: "connie@corp.example", emailVerified: true });
      const start = await t.api("GET", `/api/sso/providers/${provider.id}/start`, { query: { console: 1 } });
      expect(start.status, start.text).toBe(302);
      const cookies = start.headers.getSetCookie().map((c) => c.split(";")[0]!);
      expect(cookies.some((c) => c.startsWith("tern_sso_console=1"))).toBe(true);
      const callback = await browseProvider(start.headers.get("location")!, CALLBACK, "connie");
      const res = await t.api("GET", callback.pathname + callback.search, { headers: { cookie: cookies.join("; ") } });
      expect(res.status, res.text).toBe(302);
      expect(res.headers.get("location")).toBe("/");
      const consoleCookie = res.headers.getSetCookie().find((c) => c.startsWith("tern_console="));
      expect(consoleCookie).toMatch(/HttpOnly/i);
      expect(consoleCookie).toMatch(/SameSite=Strict/i);
      const session = await t.api<{ user: { email: string } }>("GET", "/api/console/session", {
        headers: { cookie: consoleCookie!.split(";")[0]! },
      });
      expect(session.status, session.text).toBe(200);
      expect(session.body.user.email).toBe("connie@corp.example");
    });

    it("a new user of an allowed domain joins with the default role and has no password", async () => {
      idp.accounts.set("bob", { email: "bob@CORP.example", emailVerified: true, name: "Bob B." });
      const res = await signIn("bob");
      expect(res.status, res.text).toBe(200);
      const user = await t.database.db
        .selectFrom("users")
        .selectAll()
        .where("email", "=", "bob@CORP.example")
        .executeTakeFirstOrThrow();
      expect(user.name).toBe("Bob B.");
      const membership = await t.database.db
        .selectFrom("memberships")
        .selectAll()
        .where("user_id", "=", user.id)
        .executeTakeFirstOrThrow();
      expect(membership).toMatchObject({ organization_id: t.admin.orgId, role: "manager" });
      const password = await t.api<ErrorBody>("POST", "/api/users/login", {
        body: { username: user.email, password: "!no-password" },
      });
      expect(password.status).toBe(401);
      const audit = await t.api<{ action: string }[]>("GET", "/api/audit", {
        token: t.admin.token,
        query: { filter: JSON.stringify([{ key: "resourceId", op: "==", val: user.id }]) },
      });
      expect(audit.body.map((e) => e.action)).toContain("sso-join");
    });

    it("an account-wide provider (set by an account owner) makes new users members of the account", async () => {
      const wide = await t.api<SsoProvider>("POST", "/api/sso/providers", {
        token: t.admin.token,
        body: {
          name: "Account-wide",
          issuer: idp.issuer,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
          allowedDomains: ["corp.example"],
          membershipScope: "account",
        },
      });
      expect(wide.status, wide.text).toBe(201);
      idp.accounts.set("hank", { email: "hank@corp.example", emailVerified: true });
      const res = await signIn("hank", { providerId: wide.body.id });
      expect(res.status, res.text).toBe(200);
      const user = await t.database.db
        .selectFrom("users")
        .select("id")
        .where("email", "=", "hank@corp.example")
        .executeTakeFirstOrThrow();
      const membership = await t.database.db
        .selectFrom("memberships")
        .selectAll()
        .where("user_id", "=", user.id)
        .executeTakeFirstOrThrow();
      expect(membership).toMatchObject({ account_id: t.admin.accountId, organization_id: null, role: "viewer" });
      expect((await t.api("DELETE", `/api/sso/providers/${wide.body.id}`, { token: t.admin.token })).status).toBe(204);
    });

    it("refuses an address outside the allowed domains and one the provider has not verified", async () => {
      idp.accounts.set("eve", { email: "eve@elsewhere.example", emailVerified: true });
      const outside = await signIn<ErrorBody>("eve");
      expect(outside.status).toBe(403);
      expect(outside.body.code).toBe("SSO_NOT_ALLOWED");
      idp.accounts.set("carol", { email: "carol@corp.example", emailVerified: false });
      const unverified = await signIn<ErrorBody>("carol");
      expect(unverified.status).toBe(403);
      expect(unverified.body.code).toBe("SSO_EMAIL_NOT_VERIFIED");
      const made = await t.database.db
        .selectFrom("users")
        .select("id")
        .where("email", "in", ["eve@elsewhere.example", "carol@corp.example"])
        .execute();
      expect(made).toEqual([]);
    });

    it("a user with 2FA gets the second-factor challenge, not tokens", async () => {
      const member = await t.addMember("viewer", { email: "dave@corp.example" });
      const enrol = await t.api<{ secret: string }>("POST", "/api/users/me/mfa/enrol", {
        token: member.token,
        body: { password: member.password },
      });
      await t.api("POST", "/api/users/me/mfa/confirm", {
        token: member.token,
        body: { code: await generate({ secret: enrol.body.secret }) },
      });
      idp.accounts.set("dave", { email: "dave@corp.example", emailVerified: true });
      const res = await signIn<MfaChallenge>("dave");
      expect(res.status).toBe(200);
      expect(res.body.mfaRequired).toBe(true);
      const done = await t.api<TokenPair>("POST", "/api/users/login/mfa", {
        body: {
          challenge: res.body.challenge,
          code: await generate({ secret: enrol.body.secret, epoch: Math.floor(Date.now() / 1000) + 30 }),
        },
      });
      expect(done.status, done.text).toBe(200);
    });
  });

  describe("sign-in security", () => {
    it("the callback only counts once, in the browser that started it, with the state it was given", async () => {
      idp.accounts.set("frank", { email: "frank@corp.example", emailVerified: true });
      const noCookie = await signIn<ErrorBody>("frank", { cookie: null });
      expect(noCookie.status).toBe(400);
      expect(noCookie.body.code).toBe("SSO_FAILED");
      const wrongCookie = await signIn<ErrorBody>("frank", { cookie: "tern_sso=another-browser" });
      expect(wrongCookie.status).toBe(400);
      expect(wrongCookie.body.code).toBe("SSO_FAILED");

      const ok = await signIn("frank");
      expect(ok.status, ok.text).toBe(200);
      const replay = await t.api<ErrorBody>("GET", ok.callback.pathname + ok.callback.search, {
        headers: { cookie: "tern_sso=whatever" },
      });
      expect(replay.status).toBe(400);
      expect(replay.body.code).toBe("SSO_FAILED");
      const forged = new URL(ok.callback);
      forged.searchParams.set("state", "forged-state");
      const forgedRes = await t.api<ErrorBody>("GET", forged.pathname + forged.search);
      expect(forgedRes.body.code).toBe("SSO_FAILED");
      const noState = await t.api<ErrorBody>("GET", "/api/sso/callback?code=abc");
      expect(noState.status).toBe(400);
      expect(noState.body.code).toBe("SSO_FAILED");
      // Parameters a provider adds of its own (Google: scope, authuser, hd, prompt) are no validation error.
      const extraParams = await t.api<ErrorBody>("GET", "/api/sso/callback?state=x&code=y&authuser=0&hd=corp.example");
      expect(extraParams.status).toBe(400);
      expect(extraParams.body.code).toBe("SSO_FAILED");
      const tooLong = await t.api<ErrorBody>("GET", `/api/sso/callback?state=${"x".repeat(300)}`);
      expect(tooLong.body.code).toBe("VALIDATION_FAILED");
    });

    it("a tampered code or a refusal at the provider is SSO_FAILED", async () => {
      idp.accounts.set("gina", { email: "gina@corp.example", emailVerified: true });
      const start = await t.api("GET", `/api/sso/providers/${provider.id}/start`);
      const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0]!;
      const callback = await browseProvider(start.headers.get("location")!, CALLBACK, "gina");
      callback.searchParams.set("code", `${callback.searchParams.get("code")}x`);
      const tampered = await t.api<ErrorBody>("GET", callback.pathname + callback.search, { headers: { cookie } });
      expect(tampered.status).toBe(400);
      expect(tampered.body.code).toBe("SSO_FAILED");

      const aborted = await signIn<ErrorBody>("gina", { abort: true });
      expect(aborted.callback.searchParams.get("error")).toBe("access_denied");
      expect(aborted.status).toBe(400);
      expect(aborted.body.code).toBe("SSO_FAILED");
    });

    it("a provider cannot sign in a user who belongs beyond its organization, even with an allowed domain", async () => {
      // A user of another tenant whose address the provider asserts: no session, no membership.
      const victim = await t.createTenant("Victim");
      await t.database.db.updateTable("users").set({ email: "victim@corp.example" }).where("id", "=", victim.id).execute();
      idp.accounts.set("victim", { email: "victim@corp.example", emailVerified: true });
      const res = await signIn<ErrorBody>("victim");
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("SSO_NOT_ALLOWED");
      const memberships = await t.database.db.selectFrom("memberships").select("id").where("user_id", "=", victim.id).execute();
      expect(memberships).toHaveLength(1);
      // Nor the account owner of this very tenant (an account-wide member) through an organization's provider.
      await t.database.db.updateTable("users").set({ email: "owner@corp.example" }).where("id", "=", t.admin.id).execute();
      idp.accounts.set("owner", { email: "owner@corp.example", emailVerified: true });
      const owner = await signIn<ErrorBody>("owner");
      expect(owner.body.code).toBe("SSO_NOT_ALLOWED");
      await t.database.db.updateTable("users").set({ email: t.admin.email }).where("id", "=", t.admin.id).execute();
    });

    it("start: an unknown provider is 404; a provider that cannot be reached is 502", async () => {
      const unknown = await t.api<ErrorBody>("GET", `/api/sso/providers/${crypto.randomUUID()}/start`);
      expect(unknown.status).toBe(404);
      const dead = await t.api<SsoProvider>("POST", "/api/sso/providers", {
        token: t.admin.token,
        body: { name: "Dead", issuer: "http://127.0.0.1:9/", clientId: "x", clientSecret: "y" },
      });
      const res = await t.api<ErrorBody>("GET", `/api/sso/providers/${dead.body.id}/start`);
      expect(res.status).toBe(502);
      expect(res.body.code).toBe("SSO_PROVIDER_UNAVAILABLE");
    });
  });
});

describe("single sign-on: server settings", () => {
  const t: TestServer = useTestServer();

  it("http issuers are refused unless allowed; without TERN_PUBLIC_URL sign-in is a clear 409", async () => {
    const http = await t.api<ErrorBody & { details: { path: string }[] }>("POST", "/api/sso/providers", {
      token: t.admin.token,
      body: { name: "Plain", issuer: "http://idp.example.com", clientId: "x", clientSecret: "y" },
    });
    expect(http.status).toBe(400);
    expect(http.body.details.map((d) => d.path)).toEqual(["issuer"]);
    const made = await t.api<SsoProvider>("POST", "/api/sso/providers", {
      token: t.admin.token,
      body: { name: "Tls", issuer: "https://idp.example.com", clientId: "x", clientSecret: "y" },
    });
    expect(made.body.redirectUri).toBeNull();
    const start = await t.api<ErrorBody>("GET", `/api/sso/providers/${made.body.id}/start`);
    expect(start.status).toBe(409);
    expect(start.body.code).toBe("CONFLICT");
  });
});
