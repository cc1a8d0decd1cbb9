/** POST /api/users/login, /refresh, /logout: case-sensitive e-mails, rotation, revocation, rate limits, hashed secrets. */
import type { TokenPair } from "@tern/protocol";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createTestServer, useTestServer } from "../../../test/support/test-server.ts";
import { signAccessToken } from "../../auth/jwt.ts";

type ErrorBody = { code: string; details: { path: string }[] };

describe("POST /api/users/login", () => {
  const t = useTestServer();

  it("answers a bearer pair that opens the API", async () => {
    const res = await t.api<TokenPair>("POST", "/api/users/login", {
      body: { username: t.admin.email, password: t.admin.password },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tokenType: "Bearer", expiresIn: 300 });
    expect(res.body.refreshToken).toMatch(/^tern_rt_/);
    const orgs = await t.api("GET", "/api/organizations", { token: res.body.accessToken });
    expect(orgs.status).toBe(200);
  });

  it("compares the e-mail case sensitively", async () => {
    const member = await t.addMember("viewer", { email: "Mixed.Case@Example.com" });
    for (const username of ["mixed.case@example.com", "MIXED.CASE@EXAMPLE.COM", "Mixed.case@Example.com"]) {
      const res = await t.api<ErrorBody>("POST", "/api/users/login", { body: { username, password: member.password } });
      expect(res.status, username).toBe(401);
      expect(res.body.code).toBe("UNAUTHENTICATED");
    }
    const exact = await t.api("POST", "/api/users/login", {
      body: { username: "Mixed.Case@Example.com", password: member.password },
    });
    expect(exact.status).toBe(200);
  });

  it("refuses a wrong password and an unknown user with the same answer", async () => {
    const wrong = await t.api<ErrorBody>("POST", "/api/users/login", { body: { username: t.admin.email, password: "nope" } });
    const unknown = await t.api<ErrorBody>("POST", "/api/users/login", {
      body: { username: "ghost@example.com", password: "nope" },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  it("validates the body", async () => {
    const res = await t.api<ErrorBody>("POST", "/api/users/login", { body: { username: "not-an-email", password: "" } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details.map((d) => d.path).sort()).toEqual(["password", "username"]);
  });

  it("stores only hashes: no password, refresh token or JWT in any row", async () => {
    const pair = await t.login(t.admin.email, t.admin.password);
    const users = await t.database.db.selectFrom("users").select(["email", "password_hash"]).execute();
    for (const u of users) expect(u.password_hash).toMatch(/^scrypt\$\d+\$8\$1\$/);
    const dump = JSON.stringify(
      await sql`select row_to_json(x)::text as j from (select * from users) x union all select row_to_json(s)::text from sessions s`.execute(
        t.database.db,
      ),
    );
    expect(dump).not.toContain(t.admin.password);
    expect(dump).not.toContain(pair.refreshToken);
    expect(dump).not.toContain(pair.refreshToken.slice("tern_rt_".length));
  });
});

describe("POST /api/users/refresh and /logout", () => {
  const t = useTestServer();

  it("rotates: the new refresh token works once, the old one no longer", async () => {
    const first = await t.login(t.admin.email, t.admin.password);
    const second = await t.api<TokenPair>("POST", "/api/users/refresh", { body: { refreshToken: first.refreshToken } });
    expect(second.status).toBe(200);
    expect(second.body.refreshToken).not.toBe(first.refreshToken);
    expect((await t.api("GET", "/api/organizations", { token: second.body.accessToken })).status).toBe(200);

    const reused = await t.api<ErrorBody>("POST", "/api/users/refresh", { body: { refreshToken: first.refreshToken } });
    expect(reused.status).toBe(401);
    expect(reused.body.code).toBe("UNAUTHENTICATED");
  });

  it("logout revokes the refresh token and the access JWTs of the session", async () => {
    const pair = await t.login(t.admin.email, t.admin.password);
    const other = await t.login(t.admin.email, t.admin.password);
    expect((await t.api("GET", "/api/organizations", { token: pair.accessToken })).status).toBe(200);

    expect((await t.api("POST", "/api/users/logout", { body: { refreshToken: pair.refreshToken } })).status).toBe(204);
    expect((await t.api("GET", "/api/organizations", { token: pair.accessToken })).status).toBe(401);
    expect((await t.api("POST", "/api/users/refresh", { body: { refreshToken: pair.refreshToken } })).status).toBe(401);
    // Logging out twice is fine; other sessions are untouched.
    expect((await t.api("POST", "/api/users/logout", { body: { refreshToken: pair.refreshToken } })).status).toBe(204);
    expect((await t.api("GET", "/api/organizations", { token: other.accessToken })).status).toBe(200);
    const sid = (JSON.parse(Buffer.from(pair.accessToken.split(".")[1]!, "base64url").toString()) as { sid: string }).sid;
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "actor"])
      .where("resource_id", "=", sid)
      .execute();
    expect(audit).toEqual([{ action: "logout", actor: t.admin.email }]);
  });

  it("an expired, tampered or foreign-key JWT is 401", async () => {
    const pair = await t.login(t.admin.email, t.admin.password);
    const [, payload] = pair.accessToken.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { sub: string; sid: string };
    const expired = await signAccessToken(claims, t.deps.keyring.jwtKey, 300, Date.now() - 3600_000);
    const foreign = await signAccessToken(claims, "some-other-server-key", 300);
    const tampered = pair.accessToken.slice(0, -2) + (pair.accessToken.endsWith("AA") ? "BB" : "AA");
    for (const token of [expired, foreign, tampered]) {
      expect((await t.api("GET", "/api/organizations", { token })).status).toBe(401);
    }
  });

  it("a removed user's session stops working", async () => {
    const member = await t.addMember("manager");
    const members = await t.api<{ id: string; user: { id: string } }[]>("GET", "/api/members", { token: t.admin.token });
    const m = members.body.find((x) => x.user.id === member.id)!;
    expect((await t.api("DELETE", `/api/members/${m.id}`, { token: t.admin.token })).status).toBe(204);
    // Still a valid login, but a member of nothing any more.
    const res = await t.api<ErrorBody>("GET", "/api/organizations", { token: member.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
  });
});

describe("login rate limits", () => {
  it("per address and account: failed attempts → 429 RATE_LIMITED with retry-after for that address, even with the right password", async () => {
    const t = await createTestServer({ TERN_LOGIN_RATE_USER: "3", TERN_LOGIN_RATE_IP: "1000" });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await t.api("POST", "/api/users/login", { body: { username: t.admin.email, password: "wrong" } })).status).toBe(
          401,
        );
      }
      const limited = await t.api<ErrorBody>("POST", "/api/users/login", {
        body: { username: t.admin.email, password: t.admin.password },
      });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe("RATE_LIMITED");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      // Another user is not affected.
      const member = await t.addMember("viewer");
      expect(
        (await t.api("POST", "/api/users/login", { body: { username: member.email, password: member.password } })).status,
      ).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("no lock-out: after many wrong passwords from address A the owner logs in from address B at once", async () => {
    const t = await createTestServer({ TERN_LOGIN_RATE_USER: "3", TERN_LOGIN_RATE_IP: "1000", TERN_TRUST_PROXY: "true" });
    try {
      const attacker = { "x-forwarded-for": "203.0.113.66" };
      const owner = { "x-forwarded-for": "198.51.100.20" };
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        const res = await t.api("POST", "/api/users/login", {
          body: { username: t.admin.email, password: `guess-${i}` },
          headers: attacker,
        });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
      // The attacker's address does not get in even with the right password while it backs off.
      const attackerRight = await t.api("POST", "/api/users/login", {
        body: { username: t.admin.email, password: t.admin.password },
        headers: attacker,
      });
      expect(attackerRight.status).toBe(429);
      const started = Date.now();
      const res = await t.api<TokenPair>("POST", "/api/users/login", {
        body: { username: t.admin.email, password: t.admin.password },
        headers: owner,
      });
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect((await t.api("GET", "/api/organizations", { token: res.body.accessToken })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("failed logins of a known user are in the audit log; unknown names are not", async () => {
    const t = await createTestServer({ TERN_TRUST_PROXY: "true" });
    try {
      const member = await t.addMember("viewer");
      await t.api("POST", "/api/users/login", {
        body: { username: member.email, password: "wrong" },
        headers: { "x-forwarded-for": "192.0.2.44", "user-agent": "guesser/1.0" },
      });
      await t.api("POST", "/api/users/login", { body: { username: "ghost@example.com", password: "wrong" } });
      let rows: { action: string; after: unknown; actor: string }[] = [];
      for (let i = 0; i < 100 && rows.length === 0; i++) {
        rows = await t.database.db
          .selectFrom("audit_log")
          .select(["action", "after", "actor"])
          .where("action", "=", "login_failed")
          .execute();
        if (!rows.length) await new Promise((r) => setTimeout(r, 20));
      }
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actor: "login:192.0.2.44", after: { ip: "192.0.2.44", userAgent: "guesser/1.0" } });
      expect(JSON.stringify(rows)).not.toContain("wrong");
      const listed = await t.api<{ action: string; resourceId: string }[]>("GET", "/api/audit", { token: t.admin.token });
      expect(listed.body.find((a) => a.action === "login_failed")?.resourceId).toBe(member.id);
    } finally {
      await t.close();
    }
  });

  it("per client IP: every attempt counts, other IPs are not affected", async () => {
    const t = await createTestServer({ TERN_LOGIN_RATE_IP: "4", TERN_LOGIN_RATE_USER: "1000", TERN_TRUST_PROXY: "true" });
    try {
      const from = (ip: string) => ({ "x-forwarded-for": ip });
      const body = { username: t.admin.email, password: t.admin.password };
      // createTestServer logged in once already from the "unknown" address; use fresh ones here.
      for (let i = 0; i < 4; i++) {
        expect((await t.api("POST", "/api/users/login", { body, headers: from("192.0.2.7") })).status).toBe(200);
      }
      const limited = await t.api<ErrorBody>("POST", "/api/users/login", { body, headers: from("192.0.2.7") });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe("RATE_LIMITED");
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
      expect((await t.api("POST", "/api/users/login", { body, headers: from("192.0.2.8") })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
