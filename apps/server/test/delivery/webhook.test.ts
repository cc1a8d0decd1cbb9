/** Webhook delivery against a real local HTTP receiver that verifies every signature. */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Severity, WebhookPayload } from "@tern/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deliverer, type DelivererOptions, type DeliveryAttempt, type WebhookChannel } from "../../src/notify/delivery/index.ts";
import { parseNetworks } from "../../src/notify/delivery/webhook-target.ts";
import { notification } from "./notification.ts";
import { WebhookReceiver } from "./webhook-receiver.ts";

const SECRET = "a-shared-secret-of-32-characters";

let receiver: WebhookReceiver;
let url: string;
let attempts: DeliveryAttempt[];
let sleeps: number[];

beforeEach(async () => {
  receiver = new WebhookReceiver(SECRET);
  url = await receiver.start();
  attempts = [];
  sleeps = [];
});
afterEach(() => receiver.stop());

/** A deliverer whose back-off is recorded instead of waited for, so retries run at once. */
function deliverer(options: DelivererOptions = {}) {
  return new Deliverer({
    log: { record: (a) => void attempts.push(a) },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000 },
    random: () => 0.5,
    sleep: async (ms) => void sleeps.push(ms),
    webhookTimeoutMs: 2000,
    // The receiver is on this host's loopback, which the default policy refuses (webhook-target.test.ts).
    webhookTargets: { allowPrivate: false, allowedNetworks: parseNetworks("127.0.0.1") },
    ...options,
  });
}
const webhook = (fields: Partial<WebhookChannel> = {}): WebhookChannel => ({
  enabled: true,
  url,
  secret: SECRET,
  minSeverity: "warning",
  ...fields,
});

describe("webhook delivery", () => {
  it("POSTs the protocol's WebhookPayload, signed so the receiver verifies it with the shared secret", async () => {
    const n = notification();
    const [result] = await deliverer().deliver({
      event: "notification.raised",
      notification: n,
      channels: { webhook: webhook() },
    });
    expect(result).toMatchObject({ channel: "webhook", status: "delivered", attempts: 1, error: null, target: url });
    const [got] = receiver.received;
    expect(got?.verified).toEqual({ ok: true });
    expect(got?.headers["content-type"]).toBe("application/json");
    expect(got?.headers["x-tern-event"]).toBe("notification.raised");
    expect(got?.headers["x-tern-delivery"]).toBe(result?.deliveryId);
    expect(got?.headers["x-tern-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    const payload = WebhookPayload.parse(JSON.parse(got?.body ?? ""));
    expect(payload.notification).toEqual(n);
    expect(Math.floor(Date.parse(payload.sentAt) / 1000)).toBe(Number(got?.headers["x-tern-timestamp"]));
    expect(attempts).toMatchObject([
      { attempt: 1, status: "delivered", responseCode: 200, error: null, channel: "webhook", notificationId: n.id },
    ]);
    expect(attempts[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("is refused by a receiver holding another secret, and a 401 is not retried", async () => {
    const other = new WebhookReceiver("a-different-secret-entirely-here");
    const otherUrl = await other.start();
    try {
      const [result] = await deliverer().deliver({
        event: "test",
        notification: null,
        channels: { webhook: webhook({ url: otherUrl }) },
      });
      expect(other.received[0]?.verified).toEqual({ ok: false, reason: "signature mismatch" });
      expect(result).toMatchObject({ status: "failed", attempts: 1, error: "HTTP 401" });
    } finally {
      await other.stop();
    }
  });

  it("retries 500s with exponential back-off and jitter, re-signing each attempt under one delivery id", async () => {
    receiver.script(500, 503, 200);
    const [result] = await deliverer().deliver({ event: "test", notification: null, channels: { webhook: webhook() } });
    expect(result).toMatchObject({ status: "delivered", attempts: 3 });
    expect(attempts.map((a) => [a.attempt, a.status, a.responseCode])).toEqual([
      [1, "retrying", 500],
      [2, "retrying", 503],
      [3, "delivered", 200],
    ]);
    // Equal jitter with random 0.5: 3/4 of base × 2^(n-1).
    expect(sleeps).toEqual([75, 150]);
    expect(new Set(receiver.received.map((r) => r.headers["x-tern-delivery"])).size).toBe(1);
    expect(receiver.received.every((r) => r.verified.ok)).toBe(true);
  });

  it("gives up after maxAttempts and reports the last error", async () => {
    receiver.script(500, 500, 500, 500, 500);
    const [result] = await deliverer().deliver({ event: "test", notification: null, channels: { webhook: webhook() } });
    expect(result).toMatchObject({ status: "failed", attempts: 4, error: "HTTP 500" });
    expect(attempts.map((a) => a.status)).toEqual(["retrying", "retrying", "retrying", "failed"]);
    expect(sleeps).toEqual([75, 150, 300]);
  });

  it("times an attempt out and retries it", async () => {
    receiver.script("hang", 200);
    const [result] = await deliverer({ webhookTimeoutMs: 300 }).deliver({
      event: "test",
      notification: null,
      channels: { webhook: webhook() },
    });
    expect(result).toMatchObject({ status: "delivered", attempts: 2 });
    expect(attempts[0]).toMatchObject({ status: "retrying", responseCode: null, error: "no answer within 300 ms" });
  });

  it("honours Retry-After on 429", async () => {
    receiver.script({ status: 429, headers: { "retry-after": "2" } }, 200);
    const [result] = await deliverer({ retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 60_000 } }).deliver({
      event: "test",
      notification: null,
      channels: { webhook: webhook() },
    });
    expect(result).toMatchObject({ status: "delivered", attempts: 2 });
    expect(sleeps).toEqual([2000]);
  });

  it.each([400, 404, 410, 422])("does not retry HTTP %i", async (status) => {
    receiver.script(status);
    const [result] = await deliverer().deliver({ event: "test", notification: null, channels: { webhook: webhook() } });
    expect(result).toMatchObject({ status: "failed", attempts: 1, error: `HTTP ${status}` });
  });

  it("does not follow redirects with the signed body", async () => {
    receiver.script({ status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } });
    const [result] = await deliverer().deliver({ event: "test", notification: null, channels: { webhook: webhook() } });
    expect(result).toMatchObject({ status: "failed", attempts: 1, error: "HTTP 302: redirects are not followed" });
    expect(receiver.received).toHaveLength(1);
  });

  it("retries when nothing listens, then fails with the network error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const [result] = await deliverer({ retry: { maxAttempts: 3 } }).deliver({
      event: "test",
      notification: null,
      channels: { webhook: webhook({ url: `http://127.0.0.1:${port}/x` }) },
    });
    expect(result).toMatchObject({ status: "failed", attempts: 3 });
    expect(result?.error).toMatch(/ECONNREFUSED/);
  });
});

describe("the Deliverer never throws into its caller", () => {
  it("resolves with a failure for a URL that cannot be fetched at all", async () => {
    const results = await deliverer().deliver({
      event: "test",
      notification: null,
      channels: { webhook: webhook({ url: "not a url" }) },
    });
    expect(results).toMatchObject([{ status: "failed" }]);
  });

  it("keeps delivering when the delivery log throws, and says so in the logger", async () => {
    const errors: string[] = [];
    const d = deliverer({
      log: {
        record: () => {
          throw new Error("database down");
        },
      },
      logger: { warn() {}, error: (_o, m) => void errors.push(m) },
    });
    const [result] = await d.deliver({ event: "test", notification: null, channels: { webhook: webhook() } });
    expect(result?.status).toBe("delivered");
    expect(errors).toEqual(["delivery log failed to record an attempt"]);
  });

  it("enqueue returns before the receiver answers; idle() waits for it", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.script({ waitFor: gate });
    const d = deliverer();
    d.enqueue({ event: "test", notification: null, channels: { webhook: webhook() } });
    expect(attempts).toEqual([]);
    const idle = d.idle();
    release();
    await idle;
    expect(attempts.map((a) => a.status)).toEqual(["delivered"]);
  });

  it("drops and logs deliveries beyond maxQueued instead of growing without bound", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.script({ waitFor: gate }, 200);
    const d = deliverer({ concurrency: 1, maxQueued: 1 });
    const request = { event: "test" as const, notification: null, channels: { webhook: webhook() } };
    d.enqueue(request); // running
    d.enqueue(request); // queued
    d.enqueue(request); // dropped
    release();
    await d.idle();
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual(
      expect.arrayContaining([
        [0, "failed"],
        [1, "delivered"],
        [1, "delivered"],
      ]),
    );
    expect(attempts).toHaveLength(3);
    expect(attempts.find((a) => a.attempt === 0)?.error).toMatch(/queue full/);
  });
});

describe("channel selection", () => {
  it.each([
    ["a disabled channel", { enabled: false }, "warning", "channel disabled"],
    [
      "a severity below the minimum",
      { minSeverity: "critical" },
      "warning",
      "severity warning is below the channel's minimum critical",
    ],
    ["no URL", { url: "" }, "critical", "no URL configured"],
  ] satisfies [string, Partial<WebhookChannel>, Severity, string][])("skips %s", async (_n, fields, severity, reason) => {
    const [result] = await deliverer().deliver({
      event: "notification.raised",
      notification: notification({ severity }),
      channels: { webhook: webhook(fields) },
    });
    expect(result).toMatchObject({ status: "skipped", attempts: 0, error: reason });
    expect(receiver.received).toEqual([]);
  });

  it("sends test events whatever the minimum severity", async () => {
    const [result] = await deliverer().deliver({
      event: "test",
      notification: null,
      channels: { webhook: webhook({ minSeverity: "critical" }) },
    });
    expect(result?.status).toBe("delivered");
  });
});
