/**
 * POST /api/accounts/signup and /verify: off by default; when on, a verified
 * e-mail creates a trial account (trial_end, plan limits), its first
 * organization and the user as owner; no enumeration; per-address mail limit;
 * plan limits enforced with ACCOUNT_LIMIT at registration, approval and
 * organization creation.
 */
import type { Account, RegisterResponse, SignupResult } from "@tern/protocol";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Mailbox, startMailbox, tokenIn } from "../../../test/support/mailbox.ts";
import { signedRegistration } from "../../../test/support/signed-registration.ts";
import { createTestServer, type TestServer } from "../../../test/support/test-server.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";

type ErrorBody = { code: string };

let t: TestServer;
let mailbox: Mailbox;
let n = 0;
const newEmail = () => `Signup.${++n}.${crypto.randomUUID().slice(0, 8)}@example.org`;
const PASSWORD = "a long trial password";

beforeAll(async () => {
  mailbox = await startMailbox();
  t = await createTestServer({
    TERN_SMTP_URL: mailbox.url,
    TERN_PUBLIC_URL: "https://saas.example.net",
    TERN_SIGNUP_ENABLED: "true",
    TERN_TRIAL_DAYS: "14",
    TERN_TRIAL_MAX_DEVICES: "2",
    TERN_TRIAL_MAX_ORGANIZATIONS: "2",
  });
});
afterAll(async () => {
  await t?.close();
  await mailbox?.stop();
});

const signup = (email: string, extra: Record<string, unknown> = {}) =>
  t.api<ErrorBody>("POST", "/api/accounts/signup", {
    body: { email, password: PASSWORD, name: "Pat Trial", organizationName: `Trial Co ${n}`, ...extra },
  });
const verify = (token: string) => t.api<SignupResult & ErrorBody>("POST", "/api/accounts/signup/verify", { body: { token } });

/** Signs up and verifies a new address; the owner logged in. */
async function signedUpOwner() {
  const email = newEmail();
  expect((await signup(email)).status).toBe(202);
  const created = await verify(tokenIn(await mailbox.waitFor(email)));
  expect(created.status, created.text).toBe(201);
  const pair = await t.login(email, PASSWORD);
  return { ...created.body, token: pair.accessToken };
}

describe("sign-up turned off (the default)", () => {
  it("answers 403 SIGNUP_DISABLED to both routes and sends nothing", async () => {
    const off = await createTestServer({ TERN_SMTP_URL: mailbox.url });
    try {
      const email = newEmail();
      const res = await off.api<ErrorBody>("POST", "/api/accounts/signup", {
        body: { email, password: PASSWORD, name: "X", organizationName: "Y" },
      });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("SIGNUP_DISABLED");
      const v = await off.api<ErrorBody>("POST", "/api/accounts/signup/verify", { body: { token: "tern_sup_x" } });
      expect(v.status).toBe(403);
      expect(v.body.code).toBe("SIGNUP_DISABLED");
      expect(off.deps.config.TERN_SIGNUP_ENABLED).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(mailbox.to(email)).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

describe("sign-up", () => {
  it("a verified e-mail creates a trial account, its organization and the user as its owner; the token works once", async () => {
    const email = newEmail();
    const before = Date.now();
    const res = await signup(email, { organizationName: "Acme Trial" });
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    const text = await mailbox.waitFor(email);
    expect(text).toContain("https://saas.example.net/api/accounts/signup/verify");
    const token = tokenIn(text);
    expect(token).toMatch(/^tern_sup_/);

    // Only hashes are stored: neither the token nor the password.
    const rows = await sql<{ j: string }>`select row_to_json(r)::text as j from account_signups r`.execute(t.database.db);
    const stored = JSON.stringify(rows.rows);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(PASSWORD);
    expect(stored).toContain(hashSecretToken(token));
    // Nothing exists before verification.
    expect(await t.database.db.selectFrom("users").select("id").where("email", "=", email).executeTakeFirst()).toBeUndefined();

    const created = await verify(token);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      email,
      account: { name: "Acme Trial", plan: "trial", limits: { devices: 2, organizations: 2 } },
    });
    const trialEnd = Date.parse(created.body.account.trial_end!);
    expect(trialEnd).toBeGreaterThanOrEqual(before + 14 * 86_400_000 - 1000);
    expect(trialEnd).toBeLessThanOrEqual(Date.now() + 14 * 86_400_000 + 1000);

    const again = await verify(token);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("INVALID_TOKEN");

    // The user signs in with the sign-up's password and owns the account (account-wide rights).
    const pair = await t.login(email, PASSWORD);
    const accounts = await t.api<Account[]>("GET", "/api/accounts", { token: pair.accessToken });
    expect(accounts.body.map((a) => a.id)).toEqual([created.body.account.id]);
    expect(accounts.body[0]!.trial_end).toBe(created.body.account.trial_end);
    const orgs = await t.api<{ id: string; name: string }[]>("GET", "/api/organizations", { token: pair.accessToken });
    expect(orgs.body.map((o) => o.id)).toEqual([created.body.organizationId]);
    const members = await t.api<{ user: { email: string }; role: string; scope: string; scopeId: string }[]>(
      "GET",
      "/api/members",
      { token: pair.accessToken },
    );
    expect(members.body).toEqual([
      expect.objectContaining({
        user: expect.objectContaining({ email }),
        role: "owner",
        scope: "account",
        scopeId: created.body.account.id,
      }),
    ]);
    const renamed = await t.api("PUT", `/api/accounts/${created.body.account.id}`, {
      token: pair.accessToken,
      body: { country: "DE" },
    });
    expect(renamed.status, renamed.text).toBe(200);

    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "organization_id"])
      .where("resource_id", "=", created.body.account.id)
      .execute();
    expect(audit).toContainEqual({ action: "signup", organization_id: created.body.organizationId });
  });

  it("answers a taken address exactly like a new one; its owner gets an e-mail saying so and nothing is created", async () => {
    const fresh = newEmail();
    const known = await signup(t.admin.email, { organizationName: "Hijack" });
    const unknown = await signup(fresh, { organizationName: "Hijack" });
    expect(known.status).toBe(202);
    expect(known.status).toBe(unknown.status);
    expect(known.text).toBe(unknown.text);
    const note = await mailbox.waitFor(t.admin.email);
    expect(note).toContain("already has a user");
    expect(() => tokenIn(note)).toThrow();
    await mailbox.waitFor(fresh);
    const pending = await t.database.db.selectFrom("account_signups").select("id").where("email", "=", t.admin.email).execute();
    expect(pending).toEqual([]);
    expect((await t.database.db.selectFrom("accounts").select("id").where("name", "=", "Hijack").execute()).length).toBe(0);
  });

  it("sends at most 3 e-mails per address and window", async () => {
    const email = newEmail();
    for (let i = 0; i < 5; i++) expect((await signup(email)).status).toBe(202);
    await mailbox.waitFor(email, 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(mailbox.to(email).length).toBe(3);
  });

  it("refuses an expired token, a foreign token and unknown fields", async () => {
    const email = newEmail();
    await signup(email);
    const token = tokenIn(await mailbox.waitFor(email));
    await t.database.db
      .updateTable("account_signups")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("email", "=", email)
      .execute();
    for (const bad of [token, "tern_pwr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "tern_sup_nope"]) {
      const res = await verify(bad);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INVALID_TOKEN");
    }
    const extra = await signup(newEmail(), { plan: "enterprise" });
    expect(extra.status).toBe(400);
    expect(extra.body.code).toBe("VALIDATION_FAILED");
    const short = await signup(newEmail(), { password: "short" });
    expect(short.body.code).toBe("VALIDATION_FAILED");
  });
});

describe("plan limits", () => {
  it("organizations per account: the trial's second is allowed, the third is 403 ACCOUNT_LIMIT; self-hosted accounts have none", async () => {
    const owner = await signedUpOwner();
    const second = await t.api("POST", "/api/organizations", { token: owner.token, body: { name: "Second" } });
    expect(second.status, second.text).toBe(201);
    const third = await t.api<ErrorBody>("POST", "/api/organizations", { token: owner.token, body: { name: "Third" } });
    expect(third.status).toBe(403);
    expect(third.body.code).toBe("ACCOUNT_LIMIT");
    const count = await t.database.db
      .selectFrom("organizations")
      .select("id")
      .where("account_id", "=", owner.account.id)
      .execute();
    expect(count.length).toBe(2);
    // The first account (no plan) is not limited.
    for (const name of ["Self 1", "Self 2", "Self 3"])
      expect((await t.api("POST", "/api/organizations", { token: t.admin.token, body: { name } })).status).toBe(201);
  });

  it("devices per account: registration of a new router past the limit and approval past it are 403 ACCOUNT_LIMIT", async () => {
    const owner = await signedUpOwner();
    const regToken = await t.api<{ token: string }>("POST", "/api/tokens", { token: owner.token, body: { name: "rollout" } });
    expect(regToken.status, regToken.text).toBe(201);
    let machine = 0;
    const facts = () => ({
      token: regToken.body.token,
      machineId: `5c4c4544-0042-4a10-8051-${String(++machine).padStart(4, "0")}${owner.userId.slice(-8)}`,
      hostname: `trial-edge-${machine}`,
      interfaces: [
        {
          devId: `pci:0000:00:0${machine}.0`,
          name: "eth0",
          mac: `02:00:00:00:0b:0${machine}`,
          deviceType: "ethernet" as const,
          IPv4: `203.0.113.${10 + machine}`,
          IPv4Mask: 24,
          gateway: "203.0.113.1",
          dhcp: false,
        },
      ],
      versions: { agent: "0.1.0", protocol: 2 },
    });
    const register = (body: unknown) => t.api<RegisterResponse & ErrorBody>("POST", "/api/connect/register", { body });
    const first = facts();
    const a = await register(signedRegistration(first));
    const b = await register(signedRegistration(facts()));
    expect([a.status, b.status], a.text + b.text).toEqual([201, 201]);
    const c = await register(signedRegistration(facts()));
    expect(c.status).toBe(403);
    expect(c.body.code).toBe("ACCOUNT_LIMIT");
    // A router that is already there registers again (it takes no new place).
    const again = await register(signedRegistration(first, Date.now() + 5));
    expect(again.status, again.text).toBe(200);

    // The plan shrinks to one device: approving both approves one and refuses the other.
    await t.database.db.updateTable("accounts").set({ max_devices: 1 }).where("id", "=", owner.account.id).execute();
    const batch = await t.api<{ results: { id: string; status: string; code?: string }[] }>("POST", "/api/devices/approve", {
      token: owner.token,
      body: { deviceIds: [a.body.deviceId, b.body.deviceId] },
    });
    expect(batch.status, batch.text).toBe(202);
    expect(batch.body.results.map((r) => r.status).sort()).toEqual(["approved", "refused"]);
    expect(batch.body.results.find((r) => r.status === "refused")?.code).toBe("ACCOUNT_LIMIT");
    const refusedId = batch.body.results.find((r) => r.status === "refused")!.id;
    const single = await t.api<ErrorBody>("PUT", `/api/devices/${refusedId}`, { token: owner.token, body: { isApproved: true } });
    expect(single.status).toBe(403);
    expect(single.body.code).toBe("ACCOUNT_LIMIT");
    const approved = await t.database.db
      .selectFrom("devices")
      .select("id")
      .where("id", "=", refusedId)
      .where("is_approved", "=", true)
      .execute();
    expect(approved).toEqual([]);
  });
});
