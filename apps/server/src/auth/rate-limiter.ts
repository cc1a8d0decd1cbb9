/**
 * Fixed-window counters in memory, used for login attempts. Limits are per
 * server instance: with N instances behind a balancer an attacker gets N times
 * the budget, which is still a hard cap on guessing.
 */
export interface RateLimiter {
  /** Seconds to wait when `key` is over its limit, else null. Does not count. */
  blockedFor(key: string, now?: number): number | null;
  /** Counts one hit of `key`. */
  hit(key: string, now?: number): void;
  /** Forgets `key` (e.g. after a successful login). */
  reset(key: string): void;
}

export function createRateLimiter(limit: number, windowSeconds: number): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const windowMs = windowSeconds * 1000;

  const current = (key: string, now: number) => {
    const w = windows.get(key);
    if (!w || now - w.start >= windowMs) return undefined;
    return w;
  };
  const sweep = (now: number) => {
    // Bounded memory under a flood of distinct keys: drop expired windows now and then.
    if (windows.size < 10_000) return;
    for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
  };

  return {
    blockedFor(key, now = Date.now()) {
      const w = current(key, now);
      if (!w || w.count < limit) return null;
      return Math.max(1, Math.ceil((w.start + windowMs - now) / 1000));
    },
    hit(key, now = Date.now()) {
      sweep(now);
      const w = current(key, now);
      if (w) w.count += 1;
      else windows.set(key, { start: now, count: 1 });
    },
    reset(key) {
      windows.delete(key);
    },
  };
}
