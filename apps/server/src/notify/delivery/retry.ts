/** The retry loop shared by the channels: exponential back-off with jitter, capped, honouring Retry-After. */
import type { AttemptOutcome, RetryPolicy } from "./types.ts";

/**
 * Back-off before attempt `attempt + 1`: base × 2^(attempt-1), capped, then
 * "equal jitter" (half fixed, half random) so retries of many deliveries
 * spread out without ever collapsing to zero.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

export interface RetryHooks {
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Called after every attempt with what happens next. */
  onAttempt: (attempt: number, outcome: AttemptOutcome, durationMs: number, willRetry: boolean) => Promise<void>;
}

export async function runWithRetries(
  run: (attempt: number) => Promise<AttemptOutcome>,
  policy: RetryPolicy,
  hooks: RetryHooks,
): Promise<{ outcome: AttemptOutcome; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const outcome = await run(attempt);
    const durationMs = Math.round(performance.now() - started);
    const willRetry = !outcome.ok && outcome.retryable && attempt < policy.maxAttempts;
    await hooks.onAttempt(attempt, outcome, durationMs, willRetry);
    if (!willRetry) return { outcome, attempts: attempt };
    const wait = !outcome.ok && outcome.retryAfterMs !== undefined ? Math.min(outcome.retryAfterMs, policy.maxDelayMs) : null;
    await hooks.sleep(wait ?? backoffDelay(attempt, policy, hooks.random));
  }
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
