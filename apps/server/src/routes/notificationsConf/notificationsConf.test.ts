/**
 * Spec rows GET/PUT /notificationsConf, /email, /webhook, /default: per-event
 * rules, e-mail recipients, webhook URL and write-only secret (with a signed
 * test delivery), and the account default that new organizations copy.
 */
import type { NotificationRule, WebhookConf } from "@tern/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { WebhookReceiver } from "../../../test/delivery/webhook-receiver.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string; details: { path: string; message: string }[] };
type Rules = Record<string, NotificationRule>;

describe("GET/PUT /notificationsConf", () => {
  const t = useTestServer();

  it("an organization without settings reads the built-in defaults for every event", async () => {
    const res = await t.api<{ rules: Rules }>("GET", "/api/notificationsConf", { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.rules)).toHaveLength(16);
    expect(res.body.rules["tunnel-rtt"]).toMatchObject({ warningThreshold: 300, criticalThreshold: 600, thresholdUnit: "ms" });
    expect(res.body.rules["link-drop-rate"]).toMatchObject({ warningThreshold: 5, criticalThreshold: 20, thresholdUnit: "%" });
    expect(res.body.rules["device-connection"]).toMatchObject({ severity: "critical", immediateEmail: true, enabled: true });
    expect(res.body.rules["device-identity-conflict"]).toMatchObject({
      severity: "critical",
      immediateEmail: true,
      sendWebHook: true,
    });
  });

  it("PUT replaces the rules of the named events, in their own unit, and keeps the others", async () => {
    const res = await t.api<{ rules: Rules }>("PUT", "/api/notificationsConf", {
      token: t.admin.token,
      body: {
        rules: {
          "tunnel-rtt": { warningThreshold: 150, criticalThreshold: 400, sendWebHook: true, immediateEmail: true },
          "job-failed": { enabled: false },
        },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.rules["tunnel-rtt"]).toEqual({
      enabled: true,
      warningThreshold: 150,
      criticalThreshold: 400,
      thresholdUnit: "ms",
      severity: "warning",
      immediateEmail: true,
      resolvedAlert: true,
      sendWebHook: true,
    });
    expect(res.body.rules["job-failed"]?.enabled).toBe(false);
    const again = await t.api<{ rules: Rules }>("GET", "/api/notificationsConf", { token: t.admin.token });
    expect(again.body).toEqual(res.body);
    expect(again.body.rules["link-rtt"]).toMatchObject({ warningThreshold: 300, criticalThreshold: 600 });
  });

  it("refuses a wrong unit, thresholds on an event without one, warning above critical and unknown events", async () => {
    const put = (rules: unknown) => t.api<ErrorBody>("PUT", "/api/notificationsConf", { token: t.admin.token, body: { rules } });
    const unit = await put({ "tunnel-rtt": { warningThreshold: 1, thresholdUnit: "%" } });
    expect(unit.status).toBe(400);
    expect(unit.body.details).toContainEqual({
      path: "rules.tunnel-rtt.thresholdUnit",
      message: "thresholds of tunnel-rtt are in ms",
    });
    const none = await put({ "job-failed": { warningThreshold: 3 } });
    expect(none.body.details[0]?.path).toBe("rules.job-failed.warningThreshold");
    const order = await put({ "link-rtt": { warningThreshold: 700, criticalThreshold: 600 } });
    expect(order.status).toBe(400);
    expect(order.body.details[0]?.path).toBe("rules.link-rtt.warningThreshold");
    const unknown = await put({ "coffee-empty": {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("VALIDATION_FAILED");
    const after = await t.api<{ rules: Rules }>("GET", "/api/notificationsConf", { token: t.admin.token });
    expect(after.body.rules["tunnel-rtt"]?.warningThreshold).toBe(150);
  });
});

describe("GET/PUT /notificationsConf/email", () => {
  const t = useTestServer();

  it("sets recipients and the lowest severity; duplicates are dropped", async () => {
    const before = await t.api("GET", "/api/notificationsConf/email", { token: t.admin.token });
    expect(before.body).toEqual({ enabled: false, recipients: [], minSeverity: "warning" });
    const res = await t.api("PUT", "/api/notificationsConf/email", {
      token: t.admin.token,
      body: { enabled: true, recipients: ["noc@example.com", "oncall@example.com", "noc@example.com"], minSeverity: "critical" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ enabled: true, recipients: ["noc@example.com", "oncall@example.com"], minSeverity: "critical" });
    expect((await t.api("GET", "/api/notificationsConf/email", { token: t.admin.token })).body).toEqual(res.body);
  });

  it("refuses bad addresses and an enabled channel without recipients", async () => {
    const bad = await t.api<ErrorBody>("PUT", "/api/notificationsConf/email", {
      token: t.admin.token,
      body: { enabled: true, recipients: ["not-an-address"] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]?.path).toBe("recipients.0");
    const empty = await t.api<ErrorBody>("PUT", "/api/notificationsConf/email", {
      token: t.admin.token,
      body: { enabled: true, recipients: [] },
    });
    expect(empty.status).toBe(400);
    expect(empty.body.details[0]?.path).toBe("recipients");
  });
});

describe("GET/PUT /notificationsConf/webhook and the test delivery", () => {
  // The receiver is on this host's loopback: allowed explicitly, as the lab does.
  const t = useTestServer({ TERN_WEBHOOK_ALLOWED_NETWORKS: "127.0.0.1" });
  const secret = "a-webhook-secret-of-32-characters!";
  const receiver = new WebhookReceiver(secret);
  afterAll(() => receiver.stop());

  it("the secret is write-only: stored encrypted, shown only as secretSet, kept when omitted", async () => {
    const initial = await t.api<WebhookConf>("GET", "/api/notificationsConf/webhook", { token: t.admin.token });
    expect(initial.body).toEqual({ enabled: false, url: "", minSeverity: "warning", secretSet: false });
    const set = await t.api<WebhookConf>("PUT", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      body: { enabled: true, url: "https://hooks.example.com/tern", secret, minSeverity: "critical" },
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ enabled: true, url: "https://hooks.example.com/tern", minSeverity: "critical", secretSet: true });
    expect(set.text).not.toContain(secret);
    const row = await t.database.db
      .selectFrom("notification_settings")
      .selectAll()
      .where("organization_id", "=", t.admin.orgId)
      .executeTakeFirstOrThrow();
    expect(row.webhook_secret_enc).not.toContain(secret);
    expect(t.deps.keyring.decrypt(row.webhook_secret_enc!, `notification-webhook:${t.admin.orgId}`)).toBe(secret);
    expect(JSON.stringify(row.webhook)).not.toContain(secret);
    const audit = await t.database.db
      .selectFrom("audit_log")
      .select(["before", "after"])
      .where("resource", "=", "notificationsConf")
      .execute();
    expect(JSON.stringify(audit)).not.toContain(secret);

    const kept = await t.api<WebhookConf>("PUT", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      body: { enabled: true, url: "https://hooks.example.com/v2" },
    });
    expect(kept.body).toMatchObject({ url: "https://hooks.example.com/v2", secretSet: true, minSeverity: "warning" });
  });

  it("refuses non-HTTP URLs, short secrets, and an enabled hook without URL", async () => {
    const ftp = await t.api<ErrorBody>("PUT", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      body: { enabled: false, url: "ftp://files.example.com/x" },
    });
    expect(ftp.status).toBe(400);
    expect(ftp.body.details[0]?.path).toBe("url");
    const short = await t.api<ErrorBody>("PUT", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      body: { secret: "short" },
    });
    expect(short.body.details[0]?.path).toBe("secret");
    const noUrl = await t.api<ErrorBody>("PUT", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      body: { enabled: true },
    });
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.details[0]?.path).toBe("url");
  });

  it("an enabled webhook needs a secret", async () => {
    const tenant = await t.createTenant("Hookless");
    const res = await t.api<ErrorBody>("PUT", "/api/notificationsConf/webhook", {
      token: tenant.token,
      body: { enabled: true, url: "https://hooks.example.com/x" },
    });
    expect(res.status).toBe(400);
    expect(res.body.details[0]?.path).toBe("secret");
  });

  it("POST /webhook/test sends one signed test delivery and reports the receiver's answer", async () => {
    const url = await receiver.start();
    await t.api("PUT", "/api/notificationsConf/webhook", { token: t.admin.token, body: { enabled: false, url, secret } });
    const ok = await t.api<{ status: string; attempts: number; target: string }>("POST", "/api/notificationsConf/webhook/test", {
      token: t.admin.token,
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "delivered", attempts: 1, target: url });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.verified).toEqual({ ok: true });
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ event: "test", notification: null });

    receiver.script(500);
    const failed = await t.api<{ status: string; error: string }>("POST", "/api/notificationsConf/webhook/test", {
      token: t.admin.token,
    });
    expect(failed.body.status).toBe("failed");
    expect(failed.body.error).toContain("500");
  });

  it("POST /webhook/test without a URL is a 400", async () => {
    const tenant = await t.createTenant("NoHook");
    const res = await t.api<ErrorBody>("POST", "/api/notificationsConf/webhook/test", { token: tenant.token });
    expect(res.status).toBe(400);
    expect(res.body.details[0]?.path).toBe("url");
  });
});

describe("GET/PUT /notificationsConf/default", () => {
  const t = useTestServer();

  it("the account default applies to organizations created after it, not to existing ones", async () => {
    const initial = await t.api<{ rules: Rules; email: unknown }>("GET", "/api/notificationsConf/default", {
      token: t.admin.token,
    });
    expect(initial.body.rules["tunnel-drop-rate"]).toMatchObject({ warningThreshold: 5, criticalThreshold: 20 });
    const existing = await t.api<{ id: string }>("POST", "/api/organizations", {
      token: t.admin.token,
      body: { name: "Before" },
    });

    const put = await t.api<{ rules: Rules; email: { recipients: string[] } }>("PUT", "/api/notificationsConf/default", {
      token: t.admin.token,
      body: {
        rules: { "tunnel-drop-rate": { warningThreshold: 2, criticalThreshold: 10, severity: "critical" } },
        email: { enabled: true, recipients: ["noc@example.com"] },
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.rules["tunnel-drop-rate"]).toMatchObject({ warningThreshold: 2, criticalThreshold: 10, thresholdUnit: "%" });
    expect(put.body.rules["tunnel-rtt"]).toMatchObject({ warningThreshold: 300 });

    const created = await t.api<{ id: string }>("POST", "/api/organizations", { token: t.admin.token, body: { name: "After" } });
    const inNew = await t.api<{ rules: Rules }>("GET", "/api/notificationsConf", {
      token: t.admin.token,
      query: { org: created.body.id },
    });
    expect(inNew.body.rules["tunnel-drop-rate"]).toMatchObject({
      warningThreshold: 2,
      criticalThreshold: 10,
      severity: "critical",
    });
    const emailNew = await t.api("GET", "/api/notificationsConf/email", {
      token: t.admin.token,
      query: { org: created.body.id },
    });
    expect(emailNew.body).toEqual({ enabled: true, recipients: ["noc@example.com"], minSeverity: "warning" });
    const hookNew = await t.api<WebhookConf>("GET", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      query: { org: created.body.id },
    });
    expect(hookNew.body).toMatchObject({ enabled: false, secretSet: false });

    for (const org of [existing.body.id, t.admin.orgId]) {
      const old = await t.api<{ rules: Rules }>("GET", "/api/notificationsConf", { token: t.admin.token, query: { org } });
      expect(old.body.rules["tunnel-drop-rate"]).toMatchObject({ warningThreshold: 5, criticalThreshold: 20 });
    }
    // Another account's default is its own.
    const tenant = await t.createTenant("Gamma");
    const theirs = await t.api<{ rules: Rules }>("GET", "/api/notificationsConf/default", { token: tenant.token });
    expect(theirs.body.rules["tunnel-drop-rate"]).toMatchObject({ warningThreshold: 5 });
  });

  it("is an account-wide act: an organization owner or a key cannot set it", async () => {
    const orgOwner = await t.addMember("owner");
    const body = { rules: {}, email: { enabled: false, recipients: [] } };
    const res = await t.api<ErrorBody>("PUT", "/api/notificationsConf/default", { token: orgOwner.token, body });
    expect(res.status).toBe(403);
    expect((await t.api("GET", "/api/notificationsConf/default", { token: orgOwner.token })).status).toBe(200);
    const accountManager = await t.addMember("manager", { scope: "account" });
    expect((await t.api("PUT", "/api/notificationsConf/default", { token: accountManager.token, body })).status).toBe(200);
  });

  it("validates the rules like the organization's", async () => {
    const res = await t.api<ErrorBody>("PUT", "/api/notificationsConf/default", {
      token: t.admin.token,
      body: { rules: { "link-rtt": { thresholdUnit: "s" } }, email: {} },
    });
    expect(res.status).toBe(400);
    expect(res.body.details[0]?.path).toBe("rules.link-rtt.thresholdUnit");
    const noRecipients = await t.api<ErrorBody>("PUT", "/api/notificationsConf/default", {
      token: t.admin.token,
      body: { rules: {}, email: { enabled: true, recipients: [] } },
    });
    expect(noRecipients.status).toBe(400);
    expect(noRecipients.body.details[0]?.path).toBe("email.recipients");
  });
});
