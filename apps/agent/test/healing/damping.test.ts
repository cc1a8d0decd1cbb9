/** Flap damping (pure): suppress after repeated flaps, exponential back-off, reuse once stable. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type DampingState,
  maxPenalty,
  newDampingState,
  DEFAULT_DAMPING as O,
  observeLink,
  reuseInMs,
} from "../../src/healing/damping.ts";

/** Runs a link that is up for `upMs` and down for `downMs`, `cycles` times, observed every 200 ms; returns the events with times. */
function flap(s: DampingState, start: number, cycles: number, upMs: number, downMs: number) {
  const events: { at: number; event: string }[] = [];
  let t = start;
  for (let c = 0; c < cycles; c++)
    for (const [up, ms] of [
      [true, upMs],
      [false, downMs],
    ] as const)
      for (let i = 0; i < ms; i += 200, t += 200) {
        const r = observeLink(s, up, t, O);
        s = r.state;
        if (r.event) events.push({ at: t, event: r.event });
      }
  return { s, events, t };
}

describe("flap damping", () => {
  it("one flap never damps", () => {
    expect(flap(newDampingState(), 0, 1, 5000, 5000).events).toEqual([]);
  });

  it("a link flapping every 5 s is damped at its second flap", () => {
    const { events } = flap(newDampingState(), 0, 4, 5000, 5000);
    expect(events[0]).toEqual({ at: 15_000, event: "damped" });
    expect(events).toHaveLength(1);
  });

  it("every flap while held down lengthens the hold-down (exponential back-off), up to the maximum", () => {
    const two = flap(newDampingState(), 0, 2, 5000, 5000);
    const six = flap(newDampingState(), 0, 6, 5000, 5000);
    expect(reuseInMs(six.s, six.t, O)).toBeGreaterThan(reuseInMs(two.s, two.t, O) + O.halfLifeMs);
    const many = flap(newDampingState(), 0, 200, 5000, 5000);
    expect(many.s.penalty).toBeLessThanOrEqual(maxPenalty(O) + 1e-6);
    expect(reuseInMs(many.s, many.t, O)).toBeLessThanOrEqual(O.maxSuppressMs);
  });

  it("a damped link that stays up is reused once its penalty decayed below reuse", () => {
    const damped = flap(newDampingState(), 0, 3, 5000, 5000);
    expect(damped.s.suppressed).toBe(true);
    const wait = reuseInMs(damped.s, damped.t, O);
    const steady = flap(damped.s, damped.t, 1, wait + 400, 0);
    expect(steady.events).toEqual([{ at: expect.any(Number), event: "reused" }]);
    expect(steady.events[0]!.at - damped.t).toBeGreaterThanOrEqual(wait - 200);
  });

  it("property: the penalty never exceeds its cap and a link is suppressed only above reuse", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 20_000 })), { maxLength: 300 }), (steps) => {
        let s = newDampingState();
        let t = 0;
        for (const [up, dt] of steps) {
          t += dt;
          s = observeLink(s, up, t, O).state;
          expect(s.penalty).toBeLessThanOrEqual(maxPenalty(O) + 1e-6);
          if (s.suppressed) expect(s.penalty).toBeGreaterThanOrEqual(O.reuse);
        }
      }),
    );
  });
});
