import { describe, expect, it } from "vitest";
import { retryAfterMs, upgradeRefusal } from "../src/connect.ts";

describe("retryAfterMs (a refused websocket upgrade's Retry-After)", () => {
  it("reads delta-seconds and HTTP dates, in milliseconds", () => {
    const now = Date.parse("2026-11-26T07:00:00Z");
    expect(retryAfterMs("3", now)).toBe(3000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs(["5", "9"], now)).toBe(5000);
    expect(retryAfterMs("Thu, 26 Nov 2026 07:00:04 GMT", now)).toBe(4000);
    // A date already past: at once.
    expect(retryAfterMs("Thu, 26 Nov 2026 06:59:00 GMT", now)).toBe(0);
  });

  it("is null without a header or for one that is neither", () => {
    expect(retryAfterMs(undefined)).toBeNull();
    expect(retryAfterMs("")).toBeNull();
    expect(retryAfterMs("-1")).toBeNull();
    expect(retryAfterMs("soon")).toBeNull();
  });

  it("upgradeRefusal: a busy server's wait (at least 500 ms), none for other refusals", () => {
    expect(upgradeRefusal(503, "3")).toEqual({ error: "Unexpected server response: 503", retryAfterMs: 3000 });
    expect(upgradeRefusal(429, "0").retryAfterMs).toBe(500);
    expect(upgradeRefusal(503, undefined).retryAfterMs).toBeNull();
    expect(upgradeRefusal(403, "3")).toEqual({ error: "Unexpected server response: 403", retryAfterMs: null });
  });
});
