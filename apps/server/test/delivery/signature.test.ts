import { describe, expect, it } from "vitest";
import {
  backoffDelay,
  parseRetryAfter,
  signWebhookBody,
  verifyWebhookSignature,
  webhookBody,
} from "../../src/notify/delivery/index.ts";

const secret = "a-shared-secret-of-32-characters";
const now = Date.parse("2026-11-21T12:00:00Z");
const body = webhookBody("test", null, new Date(now));
const good = { secret, body, signature: signWebhookBody(secret, body), timestamp: String(now / 1000), now };

describe("verifyWebhookSignature", () => {
  it("accepts what the sender signed", () => expect(verifyWebhookSignature(good)).toEqual({ ok: true }));
  it.each([
    ["a changed body", { body: body.replace("test", "tset") }, "signature mismatch"],
    [
      "a signature made with another secret",
      { signature: signWebhookBody("another-secret-of-some-length!!", body) },
      "signature mismatch",
    ],
    ["no signature", { signature: undefined }, "missing x-tern-signature"],
    ["no timestamp", { timestamp: undefined }, "missing or malformed x-tern-timestamp"],
    ["a replay ten minutes later", { now: now + 600_000 }, "timestamp outside the tolerance"],
    [
      "a timestamp header moved to look fresh",
      { timestamp: String(now / 1000 + 600), now: now + 600_000 },
      "timestamp header does not match the signed sentAt",
    ],
  ])("refuses %s", (_n, change, reason) => {
    expect(verifyWebhookSignature({ ...good, ...change })).toEqual({ ok: false, reason });
  });
  it("is the HMAC-SHA256 of the raw body (a known vector)", () => {
    // echo -n '{"a":1}' | openssl dgst -sha256 -hmac key
    expect(signWebhookBody("key", '{"a":1}')).toBe("sha256=88a67f24bbcdaed0e6c997404bb79a743baf44c6bab2f4c27328e3009d22e342");
  });
});

describe("back-off", () => {
  const policy = { maxAttempts: 10, baseDelayMs: 1000, maxDelayMs: 8000 };
  it("doubles, is capped, and its jitter stays between half and all of the step", () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, policy, () => 0))).toEqual([500, 1000, 2000, 4000, 4000]);
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, policy, () => 1))).toEqual([1000, 2000, 4000, 8000, 8000]);
  });
  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
