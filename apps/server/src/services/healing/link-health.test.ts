/** When a link counts as degraded and recovered (pure): sustained anomalies only, with hysteresis. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_BASELINE_OPTIONS as O } from "./baseline.ts";
import {
  CLEAR_AFTER,
  type LinkEvent,
  type LinkHealth,
  newLinkHealth,
  parseLinkHealth,
  RAISE_AFTER,
  stepLinkHealth,
} from "./link-health.ts";

const at = new Date(Date.UTC(2026, 10, 25, 12));
const good = (i: number) => ({ rtt: 20 + (i % 3), loss: i % 7 === 0 ? 0.5 : 0, jitter: 1 + (i % 2) });
const bad = { rtt: 120, loss: 0, jitter: 2 };

function run(h: LinkHealth, samples: { rtt: number; loss: number; jitter: number }[]) {
  const events: LinkEvent[] = [];
  for (const s of samples) {
    const r = stepLinkHealth(h, s, at, O);
    h = r.health;
    if (r.event) events.push(r.event);
  }
  return { h, events };
}

const learnt = () =>
  run(
    newLinkHealth(),
    Array.from({ length: 100 }, (_, i) => good(i)),
  ).h;

describe("link health", () => {
  it("a clean link raises nothing", () => {
    expect(
      run(
        newLinkHealth(),
        Array.from({ length: 400 }, (_, i) => good(i)),
      ).events,
    ).toEqual([]);
  });

  it(`degraded after ${RAISE_AFTER} anomalous samples in a row, with the figures and baseline as evidence; recovered after ${CLEAR_AFTER} normal ones`, () => {
    const { h, events } = run(learnt(), [bad, bad, bad, bad]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: "degraded", evidence: { rtt: 120 } });
    expect((events[0] as { evidence: Record<string, number> }).evidence.rttBaseline).toBeLessThan(25);
    expect(h.degraded).toBe(true);
    const back = run(
      h,
      Array.from({ length: CLEAR_AFTER }, (_, i) => good(i)),
    );
    expect(back.events).toEqual([expect.objectContaining({ kind: "recovered", before: expect.objectContaining({ rtt: 120 }) })]);
    expect(back.h.degraded).toBe(false);
  });

  it("an isolated bad sample, or two, moves nothing", () => {
    expect(run(learnt(), [bad, good(1), bad, bad, good(2), bad]).events).toEqual([]);
  });

  it("property: events alternate degraded/recovered, whatever the sequence", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), (seq) => {
        const { events } = run(
          learnt(),
          seq.map((b, i) => (b ? bad : good(i))),
        );
        expect(events.map((e) => e.kind)).toEqual(events.map((_, i) => (i % 2 === 0 ? "degraded" : "recovered")));
      }),
      { numRuns: 50 },
    );
  });

  it("a stored state parses back; rerouting comes from its column", () => {
    const h = learnt();
    const parsed = parseLinkHealth(JSON.parse(JSON.stringify(h)), true);
    expect(parsed.baseline).toEqual(h.baseline);
    expect(parsed.degraded).toBe(true);
    expect(parseLinkHealth(undefined, false)).toEqual(newLinkHealth());
  });
});
