/**
 * Server-side request forgery through webhooks: a webhook URL may not reach
 * loopback, link-local, cloud metadata or (unless allowed) private addresses,
 * checked when the URL is saved (400 WEBHOOK_TARGET_FORBIDDEN) and again when
 * each request connects, after DNS resolution.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Deliverer, type WebhookChannel } from "../../src/notify/delivery/index.ts";
import {
  checkAddress,
  checkWebhookUrl,
  PUBLIC_ONLY,
  parseNetworks,
  type WebhookTargetPolicy,
} from "../../src/notify/delivery/webhook-target.ts";
import { useTestServer } from "../support/test-server.ts";
import { WebhookReceiver } from "./webhook-receiver.ts";

const SECRET = "a-shared-secret-of-32-characters";
const PRIVATE_OK: WebhookTargetPolicy = { allowPrivate: true, allowedNetworks: [] };

describe("checkAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["169.254.10.1", "link-local"],
    ["fe80::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["2002:7f00:1::", "reserved"],
  ])("refuses %s (%s) even where private ranges are allowed", (address, reason) => {
    for (const policy of [PUBLIC_ONLY, PRIVATE_OK]) {
      const v = checkAddress(address, policy);
      expect(v.allowed).toBe(false);
      if (!v.allowed) expect(v.reason).toContain(reason);
    }
  });

  it.each(["10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1", "fd12:3456::1", "::ffff:10.0.0.1"])(
    "refuses the private address %s unless private ranges are allowed",
    (address) => {
      expect(checkAddress(address, PUBLIC_ONLY)).toMatchObject({ allowed: false, reason: expect.stringContaining("private") });
      expect(checkAddress(address, PRIVATE_OK)).toEqual({ allowed: true });
    },
  );

  it.each(["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111"])("allows the public address %s", (address) => {
    expect(checkAddress(address, PUBLIC_ONLY)).toEqual({ allowed: true });
  });

  it("an allowed network admits any class, and only its own addresses", () => {
    const policy: WebhookTargetPolicy = { allowPrivate: false, allowedNetworks: parseNetworks("127.0.0.0/8, ::1") };
    expect(checkAddress("127.0.0.1", policy)).toEqual({ allowed: true });
    expect(checkAddress("::1", policy)).toEqual({ allowed: true });
    expect(checkAddress("10.0.0.1", policy).allowed).toBe(false);
    expect(checkAddress("169.254.169.254", policy).allowed).toBe(false);
  });

  it("rejects a malformed network list", () => {
    expect(() => parseNetworks("127.0.0.0/33")).toThrow();
    expect(() => parseNetworks("not-an-address")).toThrow();
  });
});

describe("checkWebhookUrl (at save time)", () => {
  it("judges every address a name resolves to, and the URL parser's normal form of odd literals", async () => {
    const lookup = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ];
    expect((await checkWebhookUrl("https://rebind.example/", PUBLIC_ONLY, lookup))?.address).toBe("127.0.0.1");
    expect(
      await checkWebhookUrl("https://ok.example/", PUBLIC_ONLY, async () => [{ address: "93.184.216.34", family: 4 }]),
    ).toBeNull();
    // 2130706433 and 0x7f.1 are 127.0.0.1 to the WHATWG URL parser, and so to fetch.
    expect((await checkWebhookUrl("http://2130706433/", PUBLIC_ONLY))?.address).toBe("127.0.0.1");
    expect((await checkWebhookUrl("http://0x7f.1/", PUBLIC_ONLY))?.address).toBe("127.0.0.1");
    expect((await checkWebhookUrl("http://[::ffff:7f00:1]/", PUBLIC_ONLY))?.reason).toContain("loopback");
    expect((await checkWebhookUrl("http://localhost:8080/", PUBLIC_ONLY))?.reason).toContain("loopback");
  });
});

describe("webhook deliveries (at send time)", () => {
  const receiver = new WebhookReceiver(SECRET);
  let url: string;
  beforeAll(async () => {
    url = await receiver.start();
  });
  afterAll(() => receiver.stop());
  const channel = (u: string): WebhookChannel => ({ enabled: true, url: u, secret: SECRET, minSeverity: "warning" });

  it("a name that resolves to loopback when the request is made is refused before connecting, and not retried", async () => {
    const d = new Deliverer({ retry: { maxAttempts: 3 }, sleep: async () => {} });
    try {
      const viaName = url.replace("127.0.0.1", "localhost");
      const [result] = await d.deliver({ event: "test", notification: null, channels: { webhook: channel(viaName) } });
      expect(result).toMatchObject({ status: "failed", attempts: 1 });
      expect(result?.error).toMatch(/localhost \((127\.0\.0\.1|::1)\) refused: loopback/);
      const [literal] = await d.deliver({ event: "test", notification: null, channels: { webhook: channel(url) } });
      expect(literal).toMatchObject({
        status: "failed",
        attempts: 1,
        error: expect.stringContaining("127.0.0.1 refused: loopback"),
      });
      expect(receiver.received).toHaveLength(0);
    } finally {
      await d.close();
    }
  });

  it("the same receiver is reached when its network is allowed, and a redirect to metadata is not followed", async () => {
    const d = new Deliverer({ webhookTargets: { allowPrivate: false, allowedNetworks: parseNetworks("127.0.0.1") } });
    try {
      const [ok] = await d.deliver({
        event: "test",
        notification: null,
        channels: { webhook: channel(url.replace("127.0.0.1", "localhost")) },
      });
      expect(ok).toMatchObject({ status: "delivered" });
      receiver.script({ status: 307, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
      const [redirected] = await d.deliver({ event: "test", notification: null, channels: { webhook: channel(url) } });
      expect(redirected).toMatchObject({ status: "failed", error: "HTTP 307: redirects are not followed" });
      expect(receiver.received).toHaveLength(2);
    } finally {
      await d.close();
    }
  });
});

describe("PUT /notificationsConf/webhook and POST /notificationsConf/webhook/test", () => {
  const t = useTestServer();
  const put = (url: string) =>
    t.api<{ code: string; details: { path: string }[] }>("PUT", "/api/notificationsConf/webhook", {
      token: t.admin.token,
      body: { enabled: true, url, secret: SECRET },
    });

  it.each([
    "http://127.0.0.1:3000/api/health",
    "http://localhost/",
    "http://[::1]:8080/",
    "http://169.254.169.254/latest/meta-data/iam/",
    "http://[fd00:ec2::254]/",
    "http://0.0.0.0:80/",
    "http://2130706433/",
    "http://10.0.0.5/hook",
    "http://192.168.1.10/hook",
  ])("refuses %s with 400 WEBHOOK_TARGET_FORBIDDEN and stores nothing", async (url) => {
    const res = await put(url);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("WEBHOOK_TARGET_FORBIDDEN");
    expect(res.body.details[0]?.path).toBe("url");
    const conf = await t.api<{ url: string }>("GET", "/api/notificationsConf/webhook", { token: t.admin.token });
    expect(conf.body.url).not.toBe(url);
  });

  it("refuses credentials in the URL (it is stored and shown in clear)", async () => {
    const res = await put("https://user:hunter2-password@93.184.216.34/hook");
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("VALIDATION_FAILED");
    expect(res.body.details[0]?.path).toBe("url");
  });

  it("accepts a public address", async () => {
    expect((await put("https://93.184.216.34/hook")).status).toBe(200);
  });

  it("the test delivery refuses a stored URL that points inside (saved before the check) instead of reporting its status", async () => {
    const receiver = new WebhookReceiver(SECRET);
    const url = await receiver.start();
    try {
      await t.database.db
        .updateTable("notification_settings")
        .set({ webhook: JSON.stringify({ enabled: true, url, minSeverity: "warning" }) })
        .where("organization_id", "=", t.admin.orgId)
        .execute();
      const res = await t.api<{ code: string }>("POST", "/api/notificationsConf/webhook/test", { token: t.admin.token });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("WEBHOOK_TARGET_FORBIDDEN");
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.stop();
    }
  });
});

describe("TERN_WEBHOOK_ALLOW_PRIVATE", () => {
  const t = useTestServer({ TERN_WEBHOOK_ALLOW_PRIVATE: "true" });
  it("admits private ranges but still refuses loopback and metadata", async () => {
    const put = (url: string) =>
      t.api<{ code: string }>("PUT", "/api/notificationsConf/webhook", { token: t.admin.token, body: { url, secret: SECRET } });
    expect((await put("http://10.0.0.5/hook")).status).toBe(200);
    expect((await put("http://[fd12::5]/hook")).status).toBe(200);
    expect((await put("http://127.0.0.1/hook")).body.code).toBe("WEBHOOK_TARGET_FORBIDDEN");
    expect((await put("http://169.254.169.254/")).body.code).toBe("WEBHOOK_TARGET_FORBIDDEN");
  });
});
