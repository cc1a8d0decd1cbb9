/** POST /api/users/password-reset and /confirm: the same answer for every address, a real e-mail, single use, 30 minutes. */
import type { TokenPair } from "@tern/protocol";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Mailbox, startMailbox, tokenIn } from "../../../test/support/mailbox.ts";
import { createTestServer, type TestServer } from "../../../test/support/test-server.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";

type ErrorBody = { code: string; details: { path: string }[] };

let t: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await createTestServer({ TERN_SMTP_URL: mailbox.url, TERN_PUBLIC_URL: "https://tern.example.net" });
});
afterAll(async () => {
  await t?.close();
  await mailbox?.stop();
});

const request = (email: string, headers: Record<string, string> = {}) =>
  t.api("POST", "/api/users/password-reset", { body: { email }, headers });
const confirm = (token: string, newPassword: string) =>
  t.api<ErrorBody>("POST", "/api/users/password-reset/confirm", { body: { token, newPassword } });

describe("password reset", () => {
  it("e-mails a token that sets a new password once and revokes every session and access token", async () => {
    const member = await t.addMember("owner");
    const key = await t.api<{ id: string; token: string }>("POST", "/api/accesstokens", {
      token: member.token,
      body: { name: "k", role: "viewer" },
    });
    const res = await request(member.email);
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    const text = await mailbox.waitFor(member.email);
    expect(text).toContain("https://tern.example.net/api/users/password-reset/confirm");
    const token = tokenIn(text);
    expect(token).toMatch(/^tern_pwr_/);

    // Only the hash is stored.
    const rows = await sql<{ j: string }>`select row_to_json(r)::text as j from password_resets r`.execute(t.database.db);
    expect(JSON.stringify(rows.rows)).not.toContain(token);
    expect(JSON.stringify(rows.rows)).toContain(hashSecretToken(token));

    expect((await confirm(token, "the new password here")).status).toBe(204);
    for (const credential of [member.token, key.body.token])
      expect((await t.api("GET", "/api/organizations", { token: credential })).status).toBe(401);
    expect((await t.api("POST", "/api/users/refresh", { body: { refreshToken: member.refreshToken } })).status).toBe(401);
    expect(
      (await t.api("POST", "/api/users/login", { body: { username: member.email, password: member.password } })).status,
    ).toBe(401);
    const pair = await t.login(member.email, "the new password here");
    expect((await t.api("GET", "/api/organizations", { token: pair.accessToken })).status).toBe(200);

    // Single use.
    const again = await confirm(token, "yet another password");
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("INVALID_TOKEN");

    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "resource_id"])
      .where((eb) => eb.or([eb("resource_id", "=", member.id), eb("resource_id", "=", key.body.id)]))
      .execute();
    const actions = audit.map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(["password_reset_requested", "password_reset", "revoke"]));
  });

  it("answers an unknown address exactly like a known one, and sends nothing", async () => {
    const member = await t.addMember("viewer");
    const known = await request(member.email, { "user-agent": "same" });
    const unknown = await request("nobody-here@example.com", { "user-agent": "same" });
    expect(unknown.status).toBe(known.status);
    expect(unknown.text).toBe(known.text);
    expect([...unknown.headers.keys()].filter((h) => h !== "x-request-id").sort()).toEqual(
      [...known.headers.keys()].filter((h) => h !== "x-request-id").sort(),
    );
    await mailbox.waitFor(member.email);
    // Give the unknown address's background work the same time to (not) send.
    await new Promise((r) => setTimeout(r, 300));
    expect(mailbox.to("nobody-here@example.com")).toHaveLength(0);
  });

  it("an expired token is refused, and a newer request voids the older token", async () => {
    const member = await t.addMember("viewer");
    await request(member.email);
    const first = tokenIn(await mailbox.waitFor(member.email, 1));
    await request(member.email);
    const second = tokenIn(await mailbox.waitFor(member.email, 2));
    expect(second).not.toBe(first);
    const voided = await confirm(first, "the new password here");
    expect(voided.status).toBe(400);
    expect(voided.body.code).toBe("INVALID_TOKEN");

    await t.database.db
      .updateTable("password_resets")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("token_hash", "=", hashSecretToken(second))
      .execute();
    const expired = await confirm(second, "the new password here");
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe("INVALID_TOKEN");
    await t.login(member.email, member.password);
  });

  it("tokens last 30 minutes by default", async () => {
    const member = await t.addMember("viewer");
    const before = Date.now();
    await request(member.email);
    const token = tokenIn(await mailbox.waitFor(member.email));
    const row = await t.database.db
      .selectFrom("password_resets")
      .select("expires_at")
      .where("token_hash", "=", hashSecretToken(token))
      .executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - before).toBeGreaterThan(29 * 60_000);
    expect(row.expires_at.getTime() - before).toBeLessThanOrEqual(30 * 60_000 + 5_000);
  });

  it("validates: bad e-mail, short password, unknown fields, a forged token", async () => {
    const bad = await t.api<ErrorBody>("POST", "/api/users/password-reset", { body: { email: "not-an-email" } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("email");
    const extra = await t.api<ErrorBody>("POST", "/api/users/password-reset", { body: { email: "a@b.c", userId: "x" } });
    expect(extra.status).toBe(400);
    const short = await confirm("tern_pwr_x", "short");
    expect(short.status).toBe(400);
    expect(short.body.details[0]?.path).toBe("newPassword");
    for (const token of ["tern_pwr_forged", "tern_inv_something", "tern_rt_whatever"]) {
      const forged = await confirm(token, "the new password here");
      expect(forged.status).toBe(400);
      expect(forged.body.code).toBe("INVALID_TOKEN");
    }
  });

  it("limits requests per client address and e-mails per address (no mailbox flooding)", async () => {
    const s = await createTestServer({ TERN_SMTP_URL: mailbox.url, TERN_LOGIN_RATE_IP: "5", TERN_TRUST_PROXY: "true" });
    try {
      const member = await s.addMember("viewer");
      const from = { "x-forwarded-for": "198.51.100.9" };
      for (let i = 0; i < 5; i++)
        expect((await s.api("POST", "/api/users/password-reset", { body: { email: member.email }, headers: from })).status).toBe(
          202,
        );
      const limited = await s.api<ErrorBody>("POST", "/api/users/password-reset", {
        body: { email: member.email },
        headers: from,
      });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe("RATE_LIMITED");
      await mailbox.waitFor(member.email, 3);
      await new Promise((r) => setTimeout(r, 300));
      expect(mailbox.to(member.email)).toHaveLength(3);
    } finally {
      await s.close();
    }
  });
});

describe("password reset without SMTP", () => {
  it("still answers 202 (the same answer), and nothing changes", async () => {
    const s = await createTestServer();
    try {
      const res = await s.api("POST", "/api/users/password-reset", { body: { email: s.admin.email } });
      expect(res.status).toBe(202);
      await new Promise((r) => setTimeout(r, 200));
      const pair: TokenPair = await s.login(s.admin.email, s.admin.password);
      expect(pair.accessToken).toBeTruthy();
    } finally {
      await s.close();
    }
  });
});
