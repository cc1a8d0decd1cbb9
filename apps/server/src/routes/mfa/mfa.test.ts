/**
 * Two-factor sign-in: enrolment, confirmation, the two-step login, replay and
 * back-off, recovery codes, disabling, the organization requirement, the audit
 * trail, and what is stored at rest.
 */
import type { MfaChallenge, TokenPair } from "@tern/protocol";
import { sql } from "kysely";
import { generate } from "otplib";
import { describe, expect, it } from "vitest";
import { type TestServer, type TestUser, useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; error: string };
type Enrolment = { secret: string; otpauthUrl: string };

const now = () => Math.floor(Date.now() / 1000);
/** The code of the time step `offset` steps from now. */
const codeAt = (secret: string, offset = 0) => generate({ secret, epoch: now() + offset * 30 });

async function enrol(t: TestServer, user: TestUser): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await t.api<Enrolment>("POST", "/api/users/me/mfa/enrol", {
    token: user.token,
    body: { password: user.password },
  });
  expect(started.status, started.text).toBe(201);
  const confirmed = await t.api<{ recoveryCodes: string[] }>("POST", "/api/users/me/mfa/confirm", {
    token: user.token,
    body: { code: await codeAt(started.body.secret) },
  });
  expect(confirmed.status, confirmed.text).toBe(200);
  return { secret: started.body.secret, recoveryCodes: confirmed.body.recoveryCodes };
}

async function passwordStep(t: TestServer, user: TestUser) {
  const res = await t.api<MfaChallenge>("POST", "/api/users/login", { body: { username: user.email, password: user.password } });
  expect(res.status).toBe(200);
  expect(res.body.mfaRequired).toBe(true);
  return res.body.challenge;
}

describe("2FA enrolment and login", () => {
  const t = useTestServer();

  it("enrol → confirm → login needs the second step; tokens only after a valid code", async () => {
    const user = await t.addMember("manager");
    const status0 = await t.api<{ enabled: boolean; pending: boolean }>("GET", "/api/users/me/mfa", { token: user.token });
    expect(status0.body).toMatchObject({ enabled: false, pending: false });

    const started = await t.api<Enrolment & { digits: number }>("POST", "/api/users/me/mfa/enrol", {
      token: user.token,
      body: { password: user.password },
    });
    expect(started.status).toBe(201);
    expect(started.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/Tern:.+\?secret=[A-Z2-7]+&issuer=Tern/);
    // Pending: the password alone still signs in.
    expect(
      (await t.api<TokenPair>("POST", "/api/users/login", { body: { username: user.email, password: user.password } })).body,
    ).toHaveProperty("accessToken");
    const pending = await t.api<{ enabled: boolean; pending: boolean }>("GET", "/api/users/me/mfa", { token: user.token });
    expect(pending.body).toMatchObject({ enabled: false, pending: true });

    const confirmCode = await codeAt(started.body.secret);
    const confirmed = await t.api<{ recoveryCodes: string[] }>("POST", "/api/users/me/mfa/confirm", {
      token: user.token,
      body: { code: confirmCode },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recoveryCodes).toHaveLength(10);
    for (const c of confirmed.body.recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    const status = await t.api<{ enabled: boolean; recoveryCodesLeft: number }>("GET", "/api/users/me/mfa", {
      token: user.token,
    });
    expect(status.body).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });

    const login = await t.api<MfaChallenge & Partial<TokenPair>>("POST", "/api/users/login", {
      body: { username: user.email, password: user.password },
    });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ mfaRequired: true, methods: ["totp", "recovery"] });
    expect(login.body.accessToken).toBeUndefined();
    expect(login.body.challenge).toMatch(/^tern_mc_/);

    // The confirmation's code is of this step: replaying it is refused; the next step's code works.
    const replay = await t.api<ErrorBody>("POST", "/api/users/login/mfa", {
      body: { challenge: login.body.challenge, code: confirmCode },
    });
    expect(replay.status).toBe(403);
    expect(replay.body.code).toBe("MFA_PROOF_INVALID");
    const done = await t.api<TokenPair>("POST", "/api/users/login/mfa", {
      body: { challenge: login.body.challenge, code: await codeAt(started.body.secret, 1) },
    });
    expect(done.status, done.text).toBe(200);
    expect((await t.api("GET", "/api/organizations", { token: done.body.accessToken })).status).toBe(200);

    // The challenge is single-use.
    const again = await t.api<ErrorBody>("POST", "/api/users/login/mfa", {
      body: { challenge: login.body.challenge, code: await codeAt(started.body.secret, 1) },
    });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe("UNAUTHENTICATED");
  });

  it("a code already used in its time step is refused on a new challenge too", async () => {
    const user = await t.addMember("viewer");
    const { secret } = await enrol(t, user);
    // The confirmation used step 0; sign in with step +1, then replay it.
    const code = await codeAt(secret, 1);
    const first = await t.api("POST", "/api/users/login/mfa", { body: { challenge: await passwordStep(t, user), code } });
    expect(first.status).toBe(200);
    const replay = await t.api<ErrorBody>("POST", "/api/users/login/mfa", {
      body: { challenge: await passwordStep(t, user), code },
    });
    expect(replay.status).toBe(403);
    expect(replay.body.code).toBe("MFA_PROOF_INVALID");
  });

  it("two concurrent sign-ins with the same fresh code: exactly one wins", async () => {
    const user = await t.addMember("viewer");
    const { secret } = await enrol(t, user);
    const [a, b] = [await passwordStep(t, user), await passwordStep(t, user)];
    const code = await codeAt(secret, 1);
    const results = await Promise.all(
      [a, b].map((challenge) => t.api("POST", "/api/users/login/mfa", { body: { challenge, code } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
  });

  it("recovery codes: each signs in once; regenerating replaces them all", async () => {
    const user = await t.addMember("viewer");
    const { secret, recoveryCodes } = await enrol(t, user);
    const use = async (recoveryCode: string) =>
      t.api<ErrorBody>("POST", "/api/users/login/mfa", { body: { challenge: await passwordStep(t, user), recoveryCode } });
    // Letter case and dashes do not matter.
    expect((await use(recoveryCodes[0]!.toUpperCase().replace(/-/g, ""))).status).toBe(200);
    const reused = await use(recoveryCodes[0]!);
    expect(reused.status).toBe(403);
    expect(reused.body.code).toBe("MFA_PROOF_INVALID");
    const status = await t.api<{ recoveryCodesLeft: number }>("GET", "/api/users/me/mfa", { token: user.token });
    expect(status.body.recoveryCodesLeft).toBe(9);

    const fresh = await t.api<{ recoveryCodes: string[] }>("POST", "/api/users/me/mfa/recovery-codes", {
      token: user.token,
      body: { password: user.password, code: await codeAt(secret, 1) },
    });
    expect(fresh.status).toBe(200);
    expect(fresh.body.recoveryCodes).toHaveLength(10);
    expect((await use(recoveryCodes[1]!)).status).toBe(403);
    expect((await use(fresh.body.recoveryCodes[0]!)).status).toBe(200);
  });

  it("disable needs the password and a code; afterwards the password alone signs in", async () => {
    const user = await t.addMember("viewer");
    const { secret, recoveryCodes } = await enrol(t, user);
    const wrongPassword = await t.api<ErrorBody>("POST", "/api/users/me/mfa/disable", {
      token: user.token,
      body: { password: "not-the-password", code: await codeAt(secret, 1) },
    });
    expect(wrongPassword.status).toBe(403);
    expect(wrongPassword.body.code).toBe("MFA_PROOF_INVALID");
    const noCode = await t.api<ErrorBody>("POST", "/api/users/me/mfa/disable", {
      token: user.token,
      body: { password: user.password },
    });
    expect(noCode.status).toBe(400);
    expect(noCode.body.code).toBe("VALIDATION_FAILED");
    const off = await t.api("POST", "/api/users/me/mfa/disable", {
      token: user.token,
      body: { password: user.password, recoveryCode: recoveryCodes[3] },
    });
    expect(off.status).toBe(204);
    const login = await t.api<TokenPair>("POST", "/api/users/login", { body: { username: user.email, password: user.password } });
    expect(login.body.accessToken).toBeTruthy();
    const twice = await t.api<ErrorBody>("POST", "/api/users/me/mfa/disable", {
      token: user.token,
      body: { password: user.password, code: await codeAt(secret, 1) },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe("CONFLICT");
  });

  it("errors: confirm without enrolment, enrol twice, a wrong password at enrolment, unknown fields", async () => {
    const user = await t.addMember("viewer");
    const noPending = await t.api<ErrorBody>("POST", "/api/users/me/mfa/confirm", {
      token: user.token,
      body: { code: "123456" },
    });
    expect(noPending.status).toBe(409);
    expect(noPending.body.code).toBe("CONFLICT");
    const wrong = await t.api<ErrorBody>("POST", "/api/users/me/mfa/enrol", {
      token: user.token,
      body: { password: "nope-nope" },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe("MFA_PROOF_INVALID");
    const unknown = await t.api<ErrorBody>("POST", "/api/users/me/mfa/enrol", {
      token: user.token,
      body: { password: user.password, pasword: "x" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("VALIDATION_FAILED");
    const badCode = await t.api<ErrorBody>("POST", "/api/users/me/mfa/confirm", { token: user.token, body: { code: "12ab56" } });
    expect(badCode.status).toBe(400);
    const both = await t.api<ErrorBody>("POST", "/api/users/login/mfa", {
      body: { challenge: "tern_mc_x", code: "123456", recoveryCode: "abcd-efgh-ijkl-mnop" },
    });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe("VALIDATION_FAILED");
    await enrol(t, user);
    const again = await t.api<ErrorBody>("POST", "/api/users/me/mfa/enrol", {
      token: user.token,
      body: { password: user.password },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("CONFLICT");
  });
});

describe("2FA security", () => {
  const t = useTestServer();

  it("wrong codes: the challenge dies after 5, the user's codes are backed off (429), the owner is not locked out for good", async () => {
    const user = await t.addMember("viewer");
    const { secret } = await enrol(t, user);
    const challenge = await passwordStep(t, user);
    for (let i = 0; i < 5; i++) {
      const res = await t.api<ErrorBody>("POST", "/api/users/login/mfa", { body: { challenge, code: "000000" } });
      expect(res.status, `attempt ${i + 1}`).toBe(403);
      expect(res.body.code).toBe("MFA_PROOF_INVALID");
    }
    const dead = await t.api<ErrorBody>("POST", "/api/users/login/mfa", { body: { challenge, code: await codeAt(secret, 1) } });
    expect(dead.status).toBe(401);
    // A new challenge: even the right code waits out the back-off.
    const blocked = await t.api<ErrorBody>("POST", "/api/users/login/mfa", {
      body: { challenge: await passwordStep(t, user), code: await codeAt(secret, 1) },
    });
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe("RATE_LIMITED");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(blocked.headers.get("retry-after"))).toBeLessThanOrEqual(30);
    // When the back-off has passed, the right code signs in and the count starts over.
    await t.database.db
      .updateTable("user_mfa")
      .set({ blocked_until: new Date(Date.now() - 1000) })
      .where("user_id", "=", user.id)
      .execute();
    const ok = await t.api("POST", "/api/users/login/mfa", {
      body: { challenge: await passwordStep(t, user), code: await codeAt(secret, 1) },
    });
    expect(ok.status).toBe(200);
    const row = await t.database.db
      .selectFrom("user_mfa")
      .select("failed_attempts")
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(row.failed_attempts).toBe(0);
  });

  it("a forged or random challenge is 401; a key cannot reach the user's 2FA routes", async () => {
    const res = await t.api<ErrorBody>("POST", "/api/users/login/mfa", { body: { challenge: "tern_mc_forged", code: "123456" } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHENTICATED");
    const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "k", role: "owner" },
    });
    const viaKey = await t.api<ErrorBody>("POST", "/api/users/me/mfa/enrol", { token: key.body.token, body: {} });
    expect(viaKey.status).toBe(403);
    expect(viaKey.body.code).toBe("FORBIDDEN");
    expect((await t.api("GET", "/api/users/me/mfa")).status).toBe(401);
  });

  it("at rest: the TOTP secret is encrypted, recovery codes and challenges hashed; nothing secret in the audit log", async () => {
    const user = await t.addMember("viewer");
    const { secret, recoveryCodes } = await enrol(t, user);
    const challenge = await passwordStep(t, user);
    const dump = JSON.stringify(
      (
        await sql<{ j: string }>`select row_to_json(x)::text as j from user_mfa x
          union all select row_to_json(r)::text from mfa_recovery_codes r
          union all select row_to_json(c)::text from mfa_challenges c
          union all select row_to_json(a)::text from audit_log a`.execute(t.database.db)
      ).rows,
    );
    expect(dump).not.toContain(secret);
    for (const c of recoveryCodes) {
      expect(dump).not.toContain(c);
      expect(dump).not.toContain(c.replace(/-/g, "").toUpperCase());
    }
    expect(dump).not.toContain(challenge);
    const row = await t.database.db
      .selectFrom("user_mfa")
      .select("secret_enc")
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(t.deps.keyring.decrypt(row.secret_enc, `user-mfa:${user.id}`)).toBe(secret);
  });

  it("every 2FA change is in the audit log of the user's organization", async () => {
    const user = await t.addMember("viewer");
    const { secret } = await enrol(t, user);
    await t.api("POST", "/api/users/login/mfa", { body: { challenge: await passwordStep(t, user), code: "000000" } });
    await t.api("POST", "/api/users/me/mfa/disable", {
      token: user.token,
      body: { password: user.password, code: await codeAt(secret, 1) },
    });
    const audit = await t.api<{ action: string; resourceId: string; actor: string }[]>("GET", "/api/audit", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "resourceId", op: "==", val: user.id }]) },
    });
    const mine = audit.body.filter((e) => e.resourceId === user.id).map((e) => e.action);
    expect(mine).toEqual(expect.arrayContaining(["mfa-enrol", "mfa-enable", "mfa-failed", "mfa-disable"]));
  });
});

describe("an organization that requires 2FA", () => {
  const t = useTestServer();

  it("only an owner with 2FA can require it; members without it get MFA_REQUIRED until they enrol", async () => {
    const viewer = await t.addMember("viewer");
    const manager = await t.addMember("manager");
    const path = `/api/organizations/${t.admin.orgId}/security`;
    expect((await t.api("GET", path, { token: viewer.token })).body).toEqual({ requireMfa: false });

    const byManager = await t.api<ErrorBody>("PUT", path, { token: manager.token, body: { requireMfa: true } });
    expect(byManager.status).toBe(403);
    expect(byManager.body.code).toBe("FORBIDDEN");
    const ownerWithout = await t.api<ErrorBody>("PUT", path, { token: t.admin.token, body: { requireMfa: true } });
    expect(ownerWithout.status).toBe(403);
    expect(ownerWithout.body.code).toBe("MFA_REQUIRED");
    const typo = await t.api<ErrorBody>("PUT", path, { token: t.admin.token, body: { requireMFA: true } });
    expect(typo.status).toBe(400);

    await enrol(t, t.admin);
    const on = await t.api("PUT", path, { token: t.admin.token, body: { requireMfa: true } });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ requireMfa: true });

    const blocked = await t.api<ErrorBody>("GET", "/api/devices", { token: viewer.token });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe("MFA_REQUIRED");
    expect(blocked.body.error).toContain("/api/users/me/mfa/enrol");
    // The owner (with 2FA) still acts; the viewer can still reach their own 2FA routes and enrol.
    expect((await t.api("GET", "/api/devices", { token: t.admin.token })).status).toBe(200);
    await enrol(t, viewer);
    expect((await t.api("GET", "/api/devices", { token: viewer.token })).status).toBe(200);

    const audit = await t.api<{ action: string; after: unknown }[]>("GET", "/api/audit", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "action", op: "==", val: "update-security" }]) },
    });
    expect(audit.body[0]?.after).toEqual({ requireMfa: true });
  });
});
