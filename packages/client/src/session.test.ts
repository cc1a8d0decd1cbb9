/** Session's refresh rules, with a counted refresh function (the real endpoint is exercised in test/client.test.ts). */
import { describe, expect, it } from "vitest";
import type { Credentials } from "./credentials.ts";
import { REFRESH_MARGIN_MS, Session } from "./session.ts";

const now = 1_000_000;
const session = (accessToken: string, refreshToken: string, expiresAt: number): Credentials => ({
  kind: "session",
  accessToken,
  refreshToken,
  expiresAt,
});

function counted() {
  const calls: string[] = [];
  const refresh = async (refreshToken: string) => {
    calls.push(refreshToken);
    await new Promise((r) => setTimeout(r, 10));
    return {
      status: 200,
      pair: {
        accessToken: `a${calls.length + 1}`,
        refreshToken: `r${calls.length + 1}`,
        tokenType: "Bearer" as const,
        expiresIn: 300,
      },
    };
  };
  return { calls, refresh };
}

describe("Session", () => {
  it("refreshes once for concurrent callers when the JWT is about to expire", async () => {
    const { calls, refresh } = counted();
    const s = new Session(session("a1", "r1", now + REFRESH_MARGIN_MS - 1), refresh, undefined, () => now);
    const tokens = await Promise.all([s.bearer(), s.bearer(), s.bearer()]);
    expect(calls).toEqual(["r1"]);
    expect(tokens).toEqual(["a2", "a2", "a2"]);
  });

  it("does not refresh a JWT with time left, nor after another caller already replaced it", async () => {
    const { calls, refresh } = counted();
    const s = new Session(session("a1", "r1", now + 120_000), refresh, undefined, () => now);
    expect(await s.bearer()).toBe("a1");
    expect(await s.refreshAfter("a1")).toBe(true);
    expect(await s.refreshAfter("a1")).toBe(true); // a1 was already replaced: no second refresh
    expect(calls).toEqual(["r1"]);
  });

  it("adopts credentials another process already refreshed instead of spending the refresh token again", async () => {
    const { calls, refresh } = counted();
    const stored = session("b1", "rb", now + 300_000);
    const s = new Session(
      session("a1", "r1", now),
      refresh,
      undefined,
      () => now,
      async () => stored,
    );
    expect(await s.bearer()).toBe("b1");
    expect(calls).toEqual([]);
  });

  it("ends the session when the refresh is refused", async () => {
    const seen: (Credentials | null)[] = [];
    const s = new Session(
      session("a1", "r1", now),
      async () => ({ status: 401, pair: null }),
      (c) => {
        seen.push(c);
      },
      () => now,
    );
    expect(await s.bearer()).toBeNull();
    expect(s.credentials).toBeNull();
    expect(seen).toEqual([null]);
  });

  it("an access token is sent as is and never refreshed", async () => {
    const s = new Session({ kind: "token", token: "key" }, async () => {
      throw new Error("must not refresh");
    });
    expect(await s.bearer()).toBe("key");
    expect(await s.refreshAfter("key")).toBe(false);
  });
});
