/**
 * Flap damping of links (pure; the clock is passed in), after BGP route flap
 * damping (RFC 2439): each flap (the link going from answering to silent) adds
 * PENALTY to the link's figure of merit, which decays exponentially with a
 * half-life. Above `suppress` the link is held down (not eligible for any
 * policy rule); it is usable again once the penalty has decayed below
 * `reuse`. Every flap while held down adds to the penalty, so the hold-down
 * grows with each flap (exponential back-off), up to `maxSuppressMs` (the
 * penalty is capped at what decays to `reuse` in that time).
 */

export interface DampingOptions {
  penalty: number;
  suppress: number;
  reuse: number;
  halfLifeMs: number;
  maxSuppressMs: number;
}

/** Two flaps within a minute hold a link down; one flap alone never does. */
export const DEFAULT_DAMPING: DampingOptions = {
  penalty: 1000,
  suppress: 1500,
  reuse: 750,
  halfLifeMs: 60_000,
  maxSuppressMs: 600_000,
};

export interface DampingState {
  penalty: number;
  /** When `penalty` was last brought up to date (ms, monotonic). */
  at: number;
  suppressed: boolean;
  /** Whether the link answered at the last observation (a flap is answering → silent). */
  up: boolean | null;
  flaps: number;
}

export const newDampingState = (): DampingState => ({ penalty: 0, at: 0, suppressed: false, up: null, flaps: 0 });

export const decayed = (s: DampingState, now: number, o: DampingOptions) =>
  s.penalty * 2 ** (-Math.max(0, now - s.at) / o.halfLifeMs);

/** The highest penalty: the one that decays to `reuse` in exactly maxSuppressMs. */
export const maxPenalty = (o: DampingOptions) => o.reuse * 2 ** (o.maxSuppressMs / o.halfLifeMs);

/** How long until a suppressed link is reused, if it flaps no more (0 when not suppressed). */
export function reuseInMs(s: DampingState, now: number, o: DampingOptions): number {
  if (!s.suppressed) return 0;
  const p = decayed(s, now, o);
  return p <= o.reuse ? 0 : Math.ceil(o.halfLifeMs * Math.log2(p / o.reuse));
}

export type DampingEvent = "damped" | "reused" | null;

/** One observation of whether the link answers now; returns the new state and whether it was damped or reused. */
export function observeLink(
  s: DampingState,
  up: boolean,
  now: number,
  o: DampingOptions = DEFAULT_DAMPING,
): { state: DampingState; event: DampingEvent } {
  const flapped = s.up === true && !up;
  let penalty = decayed(s, now, o);
  if (flapped) penalty = Math.min(penalty + o.penalty, maxPenalty(o));
  const flaps = s.flaps + (flapped ? 1 : 0);
  let suppressed = s.suppressed;
  let event: DampingEvent = null;
  if (!suppressed && penalty > o.suppress) {
    suppressed = true;
    event = "damped";
  } else if (suppressed && penalty < o.reuse) {
    suppressed = false;
    event = "reused";
  }
  return { state: { penalty, at: now, suppressed, up, flaps }, event };
}
