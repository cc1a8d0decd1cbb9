/**
 * Deltas of cumulative interface counters between two reports. A counter
 * lower than before either wrapped (a 32-bit counter near its top coming
 * round: the delta goes through 2^32) or was reset (interface re-created,
 * router rebooted: the count since the reset is the delta, as Prometheus'
 * rate() takes it). The first report of an interface has no delta.
 */
import type { InterfaceState } from "@tern/protocol";

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

export function countersOf(i: InterfaceState): CounterValues {
  return {
    rxBytes: i.rxBytes,
    txBytes: i.txBytes,
    rxPackets: i.rxPackets ?? null,
    txPackets: i.txPackets ?? null,
    rxErrors: i.rxErrors ?? null,
    txErrors: i.txErrors ?? null,
    rxDrops: i.rxDrops ?? null,
    txDrops: i.txDrops ?? null,
  };
}

/** Field by field deltas; a counter missing from either report has none (null). */
export function counterDeltas(prev: CounterValues, cur: CounterValues): CounterValues {
  const out = {} as CounterValues;
  for (const f of COUNTER_FIELDS) {
    const a = prev[f];
    const b = cur[f];
    out[f] = a === null || b === null ? null : counterDelta(a, b);
  }
  return out;
}

/** Adds deltas into an accumulator (null + n = n: a counter that appears mid-interval counts from there). */
export function addDeltas(acc: CounterValues, d: CounterValues): void {
  for (const f of COUNTER_FIELDS) {
    const v = d[f];
    if (v !== null) acc[f] = (acc[f] ?? 0) + v;
  }
}

export const zeroCounters = (): CounterValues => ({
  rxBytes: 0,
  txBytes: 0,
  rxPackets: null,
  txPackets: null,
  rxErrors: null,
  txErrors: null,
  rxDrops: null,
  txDrops: null,
});
