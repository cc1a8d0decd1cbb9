import { describe, expect, it } from "vitest";
import { retryAfterMs } from "../src/connect.ts";

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
});
