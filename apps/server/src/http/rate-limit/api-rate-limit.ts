/**
 * The API-wide rate limit: fixed windows counted per access token (a hash of
 * the bearer credential) and per client address. Every /api answer carries the
 * RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset headers and
 * RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers, the form most
 * clients read) of the tighter of the two; over either limit the answer is 429
 * RATE_LIMITED with Retry-After. Login and device registration keep their own
 * stricter limiters behind this one. Counters are per instance, in memory.
 */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { CONSOLE_COOKIE } from "../../auth/console-cookie.ts";
import type { AppEnv } from "../env.ts";
import { ApiError } from "../errors.ts";

export interface ApiRateLimitOptions {
  /** Requests per window per access token, and per client address. */
  perToken: number;
  perAddress: number;
  windowSeconds: number;
}

interface Window {
  start: number;
  count: number;
}

/** Counts hits per key in fixed windows; memory is swept when many keys are held. */
class WindowCounter {
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one hit; the state after it. */
  hit(key: string, now: number): { remaining: number; resetMs: number; over: boolean } {
    if (this.windows.size >= 50_000) {
      for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
    }
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count += 1;
    return { remaining: Math.max(0, this.limit - w.count), resetMs: w.start + this.windowMs - now, over: w.count > this.limit };
  }
}

/** The credential of a request, hashed so that no token is held in memory longer than the request. */
function tokenKey(authorization: string | undefined): string | null {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  return token ? createHash("sha256").update(token).digest("base64url").slice(0, 22) : null;
}

function consoleCredential(c: Context<AppEnv>): string | undefined {
  const cookie = getCookie(c, CONSOLE_COOKIE);
  return cookie ? `Bearer ${cookie}` : undefined;
}

export function apiRateLimit(options: ApiRateLimitOptions, now: () => number = Date.now): MiddlewareHandler<AppEnv> {
  const windowMs = options.windowSeconds * 1000;
  const byToken = new WindowCounter(options.perToken, windowMs);
  const byAddress = new WindowCounter(options.perAddress, windowMs);

  return async (c, next) => {
    const t = now();
    const states = [{ ...byAddress.hit(c.get("clientIp") ?? "unknown", t), limit: byAddress.limit }];
    // The console's cookie session counts as a credential of its own, like a bearer token.
    const token = tokenKey(c.req.header("authorization")) ?? tokenKey(consoleCredential(c));
    if (token) states.push({ ...byToken.hit(token, t), limit: byToken.limit });
    // The headers describe the limit closest to being reached.
    const tight = states.reduce((a, b) => ((b.over && !a.over) || (b.over === a.over && b.remaining < a.remaining) ? b : a));
    const resetSeconds = Math.max(1, Math.ceil(tight.resetMs / 1000));
    const headers = {
      "RateLimit-Policy": `${tight.limit};w=${options.windowSeconds}`,
      "RateLimit-Limit": String(tight.limit),
      "RateLimit-Remaining": String(tight.remaining),
      "RateLimit-Reset": String(resetSeconds),
    };
    const blocked = states.filter((s) => s.over);
    if (blocked.length) {
      const retryAfter = Math.max(...blocked.map((s) => Math.max(1, Math.ceil(s.resetMs / 1000))));
      throw new ApiError("RATE_LIMITED", `too many requests; retry after ${retryAfter} s`, [], {
        ...headers,
        "Retry-After": String(retryAfter),
      });
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
