/**
 * Deltas of cumulative interface counters between two reports. A counter
 * lower than before either wrapped (a 32-bit counter near its top coming
 * round: the delta goes through 2^32) or was reset (interface re-created,
 * router rebooted: the count since the reset is the delta, as Prometheus'
 * rate() takes it). The first report of an interface has no delta.
 */

export const COUNTER_FIELDS = [
  "rxBytes",
  "txBytes",
  "rxPackets",
  "txPackets",
  "rxErrors",
  "txErrors",
  "rxDrops",
  "txDrops",
] as const;
export type CounterField = (typeof COUNTER_FIELDS)[number];
/** Counter values of one report; null: the agent did not send that counter. */
export type CounterValues = Record<CounterField, number | null>;

const WRAP_32 = 2 ** 32;

/** The increase of one counter from `prev` to `cur` (both non-negative). */
export function counterDelta(prev: number, cur: number): number {
  if (cur >= prev) return cur - prev;
  // Wrapped: the previous value was in the top quarter of a 32-bit counter and the new one is small.
  if (prev < WRAP_32 && prev >= WRAP_32 * 0.75 && cur < WRAP_32 * 0.25) return cur + WRAP_32 - prev;
  return cur;
}
