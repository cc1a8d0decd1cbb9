/**
 * Login throttling that slows a password guesser down without locking the
 * account's owner out (a fixed per-account lock-out lets anyone who knows an
 * address deny its owner the service):
 *
 * - per address and account: after `freeFailures` wrong passwords for an
 *   account from one address, that address waits base·2^n seconds (n = the
 *   failures beyond the free ones, capped at `maxSeconds`) before its next
 *   password for that account is checked. Other addresses are not affected.
 * - per account: once the account has had `freeFailures` failures from all
 *   addresses in the window, addresses it was never signed in from share one
 *   slot: one password check per interval, the interval doubling with every
 *   further `freeFailures` failures (capped at ACCOUNT_INTERVAL_CAP_S), so a
 *   guesser spread over many addresses is slowed too. Addresses the account
 *   signed in from before are exempt, and a newcomer waits seconds, never
 *   longer than the cap.
 *
 * The per-IP limit of every attempt stays a separate RateLimiter. State is in
 * memory per instance (as the per-IP limit).
 */
export interface LoginBackoff {
  /**
   * Seconds `ip` must wait before a password for `account` is checked, or null
   * when it may be checked now (which may take the account's shared slot).
   */
  admit(ip: string, account: string, now?: number): number | null;
  /** A wrong password (or unknown account) for `account` from `ip`. */
  failed(ip: string, account: string, now?: number): void;
  /** The right password: the address's back-off ends and it is known for the account. */
  succeeded(ip: string, account: string, now?: number): void;
}

export interface LoginBackoffOptions {
  freeFailures: number;
  windowSeconds: number;
  baseSeconds: number;
  maxSeconds: number;
}

/** Longest interval between password checks for an attacked account from addresses it never signed in from. */
export const ACCOUNT_INTERVAL_CAP_S = 30;
const MAX_KNOWN_PER_ACCOUNT = 16;
const SWEEP_AT = 10_000;

interface PairState {
  failures: number;
  last: number;
  until: number;
}
interface AccountState {
  failures: number;
  windowStart: number;
  nextSlot: number;
}

export function createLoginBackoff(options: LoginBackoffOptions): LoginBackoff {
  const windowMs = options.windowSeconds * 1000;
  const pairs = new Map<string, PairState>();
  const accounts = new Map<string, AccountState>();
  const known = new Map<string, Set<string>>();
  const pairKey = (ip: string, account: string) => `${account}\u0000${ip}`;
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

  const account = (name: string, now: number): AccountState | undefined => {
    const a = accounts.get(name);
    if (a && now - a.windowStart >= windowMs && a.nextSlot <= now) {
      accounts.delete(name);
      return undefined;
    }
    return a;
  };
  const sweep = (now: number) => {
    // Bounded memory under a flood of distinct addresses or names.
    if (pairs.size >= SWEEP_AT) for (const [k, p] of pairs) if (now - p.last >= windowMs && p.until <= now) pairs.delete(k);
    if (accounts.size >= SWEEP_AT) for (const name of accounts.keys()) account(name, now);
    if (known.size >= SWEEP_AT * 10) known.clear();
  };

  return {
    admit(ip, name, now = Date.now()) {
      const pair = pairs.get(pairKey(ip, name));
      if (pair && pair.until > now) return seconds(pair.until - now);
      const a = account(name, now);
      if (!a || a.failures < options.freeFailures || known.get(name)?.has(ip)) return null;
      if (a.nextSlot > now) return seconds(a.nextSlot - now);
      const doublings = Math.floor(a.failures / options.freeFailures) - 1;
      const interval = Math.min(ACCOUNT_INTERVAL_CAP_S, options.maxSeconds, options.baseSeconds * 2 ** doublings);
      a.nextSlot = now + interval * 1000;
      return null;
    },
    failed(ip, name, now = Date.now()) {
      sweep(now);
      const key = pairKey(ip, name);
      let pair = pairs.get(key);
      if (!pair || (now - pair.last >= windowMs && pair.until <= now)) {
        pair = { failures: 0, last: now, until: 0 };
        pairs.set(key, pair);
      }
      pair.failures += 1;
      pair.last = now;
      const beyond = pair.failures - options.freeFailures;
      if (beyond >= 0) pair.until = now + Math.min(options.maxSeconds, options.baseSeconds * 2 ** beyond) * 1000;

      let a = account(name, now);
      if (!a) {
        a = { failures: 0, windowStart: now, nextSlot: 0 };
        accounts.set(name, a);
      }
      a.failures += 1;
    },
    succeeded(ip, name) {
      pairs.delete(pairKey(ip, name));
      let set = known.get(name);
      if (!set) {
        set = new Set();
        known.set(name, set);
      }
      set.add(ip);
      if (set.size > MAX_KNOWN_PER_ACCOUNT) set.delete(set.values().next().value!);
    },
  };
}
