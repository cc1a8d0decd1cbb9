/** /api/invitations: invite by e-mail (same answer for every address), accept once (new person or signed-in user), list, revoke. */
import type { Invitation, Membership } from "@tern/protocol";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertInvitation } from "../../../test/support/invitations.ts";
import { type Mailbox, startMailbox, tokenIn } from "../../../test/support/mailbox.ts";
import { createTestServer, type TestServer } from "../../../test/support/test-server.ts";
import { hashSecretToken } from "../../auth/secret-tokens.ts";

type ErrorBody = { code: string; details: { path: string }[] };

let t: TestServer;
let mailbox: Mailbox;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await createTestServer({ TERN_SMTP_URL: mailbox.url });
});
afterAll(async () => {
  await t?.close();
  await mailbox?.stop();
});

let n = 0;
const fresh = (what: string) => `${what}-${++n}-${Date.now()}@example.com`;
const invite = (body: unknown, token = t.admin.token, org?: string) =>
  t.api<Invitation>("POST", "/api/invitations", { token, body, query: { org } });
const accept = (body: unknown, token?: string) => t.api<Membership>("POST", "/api/invitations/accept", { body, token });

describe("inviting", () => {
  it("a new person accepts by choosing a password, then logs in as a member with the role", async () => {
    const email = fresh("newcomer");
    const res = await invite({ email, role: "manager" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      email,
      role: "manager",
      scope: "organization",
      scopeId: t.admin.orgId,
      invitedBy: t.admin.email,
    });
    const token = tokenIn(await mailbox.waitFor(email));
    expect(token).toMatch(/^tern_inv_/);

    const accepted = await accept({ token, name: "New Comer", password: "my own password" });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({ role: "manager", scope: "organization", user: { email, name: "New Comer" } });
    const pair = await t.login(email, "my own password");
    expect((await t.api("GET", "/api/devices", { token: pair.accessToken })).status).toBe(200);

    // Single use.
    const again = await accept({ token, password: "my own password" });
    expect(again.status).toBe(400);
    expect(again.body as unknown as ErrorBody).toMatchObject({ code: "INVALID_TOKEN" });
  });

  it("never tells whether the address belongs to a user of another tenant", async () => {
    const other = await t.createTenant("Elsewhere");
    const forOther = await invite({ email: other.email, role: "viewer" });
    const forNobody = await invite({ email: fresh("nobody"), role: "viewer" });
    expect(forOther.status).toBe(201);
    expect(forNobody.status).toBe(201);
    expect(Object.keys(forOther.body).sort()).toEqual(Object.keys(forNobody.body).sort());
    expect(forOther.text).not.toContain(other.id);
    // Not a member until they accept.
    const members = await t.api<Membership[]>("GET", "/api/members", { token: t.admin.token });
    expect(members.body.some((m) => m.user.email === other.email)).toBe(false);
  });

  it("an existing user accepts while signed in as the invited address; not signed in is SIGN_IN_REQUIRED", async () => {
    const other = await t.createTenant("Joiner");
    await invite({ email: other.email, role: "viewer" });
    const token = tokenIn(await mailbox.waitFor(other.email));

    const anonymous = await accept({ token, password: "trying to take over" });
    expect(anonymous.status).toBe(401);
    expect((anonymous.body as unknown as ErrorBody).code).toBe("SIGN_IN_REQUIRED");
    // Someone else, signed in, cannot take it.
    const stranger = await t.addMember("viewer");
    const wrongUser = await accept({ token }, stranger.token);
    expect(wrongUser.status).toBe(403);
    // The existing user's password did not change.
    await t.login(other.email, other.password);

    const ok = await accept({ token }, other.token);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ user: { id: other.id, email: other.email }, scope: "organization", scopeId: t.admin.orgId });
    const orgs = await t.api<{ id: string }[]>("GET", "/api/organizations", { token: other.token });
    expect(orgs.body.map((o) => o.id)).toContain(t.admin.orgId);
  });

  it("validates: a new person needs a password of 10+ characters; unknown fields are refused", async () => {
    const email = fresh("validate");
    await invite({ email, role: "viewer" });
    const token = tokenIn(await mailbox.waitFor(email));
    for (const body of [{ token }, { token, password: "short" }]) {
      const res = await accept(body);
      expect(res.status).toBe(400);
      expect((res.body as unknown as ErrorBody).details[0]?.path).toBe("password");
    }
    const extra = await accept({ token, password: "a long password", role: "owner" });
    expect(extra.status).toBe(400);
    expect((extra.body as unknown as ErrorBody).code).toBe("VALIDATION_FAILED");
    const badInvite = await invite({ email: "not-an-email", role: "boss" });
    expect(badInvite.status).toBe(400);
    expect((badInvite.body as unknown as ErrorBody).details.map((d) => d.path).sort()).toEqual(["email", "role"]);
    // The token still works after the refused attempts.
    expect((await accept({ token, password: "a long password" })).status).toBe(201);
  });

  it("stores only the token's hash", async () => {
    const email = fresh("hashed");
    await invite({ email, role: "viewer" });
    const token = tokenIn(await mailbox.waitFor(email));
    const rows = await sql<{ j: string }>`select row_to_json(i)::text as j from invitations i`.execute(t.database.db);
    const dump = JSON.stringify(rows.rows);
    expect(dump).not.toContain(token);
    expect(dump).toContain(hashSecretToken(token));
  });

  it("lists pending invitations; revoking one stops its token; a re-invite replaces the pending one", async () => {
    const email = fresh("pending");
    const first = await invite({ email, role: "viewer" });
    const firstToken = tokenIn(await mailbox.waitFor(email, 1));
    const second = await invite({ email, role: "manager" });
    const secondToken = tokenIn(await mailbox.waitFor(email, 2));
    const list = await t.api<Invitation[]>("GET", "/api/invitations", { token: t.admin.token });
    expect(list.status).toBe(200);
    const mine = list.body.filter((i) => i.email === email);
    expect(mine.map((i) => i.id)).toEqual([second.body.id]);
    expect(list.headers.get("records-total")).toBe(String(list.body.length));
    expect((await accept({ token: firstToken, password: "a long password" })).status).toBe(400);

    expect((await t.api("DELETE", `/api/invitations/${second.body.id}`, { token: t.admin.token })).status).toBe(204);
    const revoked = await accept({ token: secondToken, password: "a long password" });
    expect(revoked.status).toBe(400);
    expect((revoked.body as unknown as ErrorBody).code).toBe("INVALID_TOKEN");
    expect((await t.api("DELETE", `/api/invitations/${second.body.id}`, { token: t.admin.token })).status).toBe(404);
    expect((await t.api("DELETE", `/api/invitations/${first.body.id}`, { token: t.admin.token })).status).toBe(404);

    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["action", "resource_id"])
      .where("resource", "=", "invitations")
      .where("resource_id", "in", [first.body.id, second.body.id])
      .execute();
    expect(audit.map((a) => a.action).sort()).toEqual(["invite", "invite", "revoke", "revoke"]);
  });

  it("an expired invitation is refused", async () => {
    const email = fresh("expired");
    const { token } = await insertInvitation(t.database.db, {
      orgId: t.admin.orgId,
      scope: "organization",
      email,
      role: "viewer",
      expiresAt: new Date(Date.now() - 1000),
    });
    const res = await accept({ token, password: "a long password" });
    expect(res.status).toBe(400);
    expect((res.body as unknown as ErrorBody).code).toBe("INVALID_TOKEN");
  });

  it("accepting is audited in the organization", async () => {
    const email = fresh("audited");
    const inv = await invite({ email, role: "viewer" });
    await accept({ token: tokenIn(await mailbox.waitFor(email)), password: "a long password" });
    const audit = await t.api<{ action: string; resource: string; resourceId: string; actor: string }[]>("GET", "/api/audit", {
      token: t.admin.token,
      query: { filter: JSON.stringify([{ key: "resourceId", op: "==", val: inv.body.id }]) },
    });
    expect(audit.body.map((a) => a.action).sort()).toEqual(["accept", "invite"]);
    expect(audit.body.find((a) => a.action === "accept")?.actor).toBe(email);
  });
});

describe("invitation security", () => {
  it("viewers and managers cannot invite or revoke; org owners cannot invite account-wide or owners beyond their role", async () => {
    for (const role of ["viewer", "manager"] as const) {
      const user = await t.addMember(role);
      const res = await invite({ email: fresh(role), role: "viewer" }, user.token);
      expect(res.status, role).toBe(403);
      expect((res.body as unknown as ErrorBody).code).toBe("FORBIDDEN");
    }
    const orgOwner = await t.addMember("owner");
    const wide = await invite({ email: fresh("wide"), role: "viewer", scope: "account" }, orgOwner.token);
    expect(wide.status).toBe(403);
    const accountWide = await invite({ email: fresh("wide-ok"), role: "viewer", scope: "account" });
    expect(accountWide.status).toBe(201);
    expect(accountWide.body).toMatchObject({ scope: "account", scopeId: t.admin.accountId });
    expect((await t.api("DELETE", `/api/invitations/${accountWide.body.id}`, { token: orgOwner.token })).status).toBe(403);
  });

  it("another tenant neither sees nor revokes this tenant's invitations", async () => {
    const email = fresh("private");
    const inv = await invite({ email, role: "viewer" });
    const other = await t.createTenant("Snoop");
    const list = await t.api<Invitation[]>("GET", "/api/invitations", { token: other.token });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(email);
    expect((await t.api("DELETE", `/api/invitations/${inv.body.id}`, { token: other.token })).status).toBe(404);
    const aimed = await t.api("GET", "/api/invitations", { token: other.token, query: { org: t.admin.orgId } });
    expect([403, 404]).toContain(aimed.status);
  });

  it("accepting with a bad bearer token or an access token is refused before anything happens", async () => {
    const email = fresh("bearer");
    await invite({ email, role: "viewer" });
    const token = tokenIn(await mailbox.waitFor(email));
    const bad = await accept({ token }, "not-a-token");
    expect(bad.status).toBe(401);
    const key = await t.api<{ token: string }>("POST", "/api/accesstokens", {
      token: t.admin.token,
      body: { name: "k", role: "owner" },
    });
    const byKey = await accept({ token }, key.body.token);
    expect(byKey.status).toBe(403);
    expect((await accept({ token, password: "a long password" })).status).toBe(201);
  });
});

describe("invitations without SMTP", () => {
  it("are refused with EMAIL_UNAVAILABLE and leave nothing pending", async () => {
    const s = await createTestServer();
    try {
      const res = await s.api<ErrorBody>("POST", "/api/invitations", {
        token: s.admin.token,
        body: { email: "someone@example.com", role: "viewer" },
      });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("EMAIL_UNAVAILABLE");
      expect(await s.database.db.selectFrom("invitations").select("id").execute()).toHaveLength(0);
    } finally {
      await s.close();
    }
  });

  it("an SMTP server that refuses the recipient withdraws the invitation", async () => {
    mailbox.receiver.rcptPolicy = (address) => (address.startsWith("refused-") ? { code: 550, message: "no such user" } : null);
    try {
      const res = await invite({ email: fresh("refused"), role: "viewer" });
      expect(res.status).toBe(503);
      expect((res.body as unknown as ErrorBody).code).toBe("EMAIL_UNAVAILABLE");
      const pending = await t.api<Invitation[]>("GET", "/api/invitations", { token: t.admin.token });
      expect(pending.body.some((i) => i.email.startsWith("refused-"))).toBe(false);
    } finally {
      mailbox.receiver.rcptPolicy = () => null;
    }
  });
});
