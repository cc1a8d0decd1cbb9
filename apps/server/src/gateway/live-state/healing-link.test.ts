/**
 * The compact in-memory link gives the same judgements and the same learnt
 * statistics as stepping the stored shape (every hour of the day in one
 * object), when each turn of the hour reads that hour's stored statistics.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type LinkHealth, newLinkHealth, stepLinkHealth } from "../../services/healing/link-health.ts";
import { HealingLink, StatSlots } from "./healing-link.ts";

const sample = fc.record({
  /** Hours after the start (0 to 2 days), so that hours turn and come back. */
  hour: fc.integer({ min: 0, max: 47 }),
  rtt: fc.double({ min: 0, max: 500, noNaN: true }),
  loss: fc.double({ min: 0, max: 100, noNaN: true }),
  jitter: fc.double({ min: 0, max: 100, noNaN: true }),
});
const start = Date.UTC(2026, 11, 1, 0);

describe("healing link in memory", () => {
  it("steps like the stored shape, reading the hour's statistics when the hour turns", () => {
    fc.assert(
      fc.property(fc.array(sample, { minLength: 1, maxLength: 400 }), (raw) => {
        // Samples in time order; runs of the same hour, as statuses come.
        const samples = [...raw].sort((a, b) => a.hour - b.hour);
        let full: LinkHealth = newLinkHealth();
        const link = new HealingLink(new Date(start).getUTCHours());
        for (const [i, s] of samples.entries()) {
          const at = new Date(start + s.hour * 3_600_000 + i);
          const hour = at.getUTCHours();
          if (link.hour !== hour) {
            link.turnTo(hour);
            // What HealingMonitor reads from healing_baselines: the stored hour of each metric.
            const h = String(hour);
            link.setHour({
              rtt: full.baseline.rtt.hours[h],
              loss: full.baseline.loss.hours[h],
              jitter: full.baseline.jitter.hours[h],
            });
          }
          const a = stepLinkHealth(full, s, at);
          expect(link.step(s, at)).toEqual(a.event);
          full = a.health;
          const stored = link.stored("wan:wan0");
          expect(stored.baseline.rtt.all).toEqual(full.baseline.rtt.all);
          expect(stored.baseline.jitter.hours).toEqual({ [String(hour)]: full.baseline.jitter.hours[String(hour)] });
          expect(stored.baseline.loss.all).toEqual(full.baseline.loss.all);
          expect(stored.baseline.rtt.hours).toEqual({ [String(hour)]: full.baseline.rtt.hours[String(hour)] });
          expect([stored.anomalous, stored.normal, stored.degraded]).toEqual([full.anomalous, full.normal, full.degraded]);
          expect(stored.degradedWith).toEqual(full.degradedWith);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("does not store an hour whose stored statistics were not read yet", () => {
    const link = new HealingLink(10);
    link.step({ rtt: 20, loss: 0, jitter: 1 }, new Date(Date.UTC(2026, 11, 1, 10)));
    expect(Object.keys(link.stored("tunnel:t-1").baseline.rtt.hours)).toEqual(["10"]);
    link.turnTo(11);
    link.step({ rtt: 30, loss: 0, jitter: 1 }, new Date(Date.UTC(2026, 11, 1, 11)));
    expect(link.stored("tunnel:t-1").baseline.rtt.hours).toEqual({});
    expect(link.stored("tunnel:t-1").baseline.rtt.all.n).toBe(2);
    // The stored hour replaces the sample learnt meanwhile; a malformed one is ignored.
    link.setHour({ rtt: { n: 300, mean: 25, variance: 4 }, loss: { n: "x", mean: 0, variance: 0 } as never });
    expect(link.stored("tunnel:t-1").baseline.rtt.hours).toEqual({ "11": { n: 300, mean: 25, variance: 4 } });
    expect(link.stored("tunnel:t-1").baseline.loss.hours).toEqual({ "11": { n: 1, mean: 0, variance: 0 } });
    expect(link.stored("tunnel:t-1").tunnelId).toBe("t-1");
  });

  it("becomes degraded after 3 anomalous samples and recovers after 6 normal ones, as the stored shape does", () => {
    let full: LinkHealth = newLinkHealth();
    const link = new HealingLink(10);
    const events: string[] = [];
    const rtts = [...Array.from({ length: 40 }, (_, i) => 20 + (i % 3)), 200, 210, 220, ...Array(6).fill(21)];
    for (const [i, rtt] of rtts.entries()) {
      const at = new Date(Date.UTC(2026, 11, 1, 10, 0, i));
      const a = stepLinkHealth(full, { rtt, loss: 0, jitter: 1 }, at);
      const event = link.step({ rtt, loss: 0, jitter: 1 }, at);
      expect(event).toEqual(a.event);
      if (event) events.push(`${i}:${event.kind}`);
      full = a.health;
      expect(link.stored("tunnel:t-1").degradedWith).toEqual(full.degradedWith);
    }
    expect(events).toEqual(["42:degraded", "48:recovered"]);
  });

  it("refuses a sample of another hour than the link's", () => {
    const link = new HealingLink(10);
    expect(() => link.step({ rtt: 20, loss: 0, jitter: 1 }, new Date(Date.UTC(2026, 11, 1, 11)))).toThrow(/hour 11/);
    expect(link.stored("wan:wan0").baseline.rtt.all.n).toBe(0);
  });

  it("keeps links that share a chunk of statistics apart, each stepping as its own stored shape", () => {
    // Two slots a chunk: five links span three chunks.
    const slots = new StatSlots(2);
    const links = Array.from({ length: 5 }, () => new HealingLink(10, undefined, null, slots));
    const full: LinkHealth[] = links.map(() => newLinkHealth());
    for (let i = 0; i < 30; i++)
      for (const [k, link] of links.entries()) {
        const at = new Date(Date.UTC(2026, 11, 1, 10, 0, i));
        const figures = { rtt: 10 * (k + 1) + (i % 4), loss: k, jitter: 0.5 * k };
        const a = stepLinkHealth(full[k]!, figures, at);
        expect(link.step(figures, at)).toEqual(a.event);
        full[k] = a.health;
      }
    for (const [k, link] of links.entries()) {
      const stored = link.stored("wan:wan0");
      expect(stored.baseline.rtt).toEqual(full[k]!.baseline.rtt);
      expect(stored.baseline.loss).toEqual(full[k]!.baseline.loss);
      expect(stored.baseline.jitter).toEqual(full[k]!.baseline.jitter);
    }
    expect(slots.counts).toEqual({ made: 5, free: 0 });
  });

  it("gives a collected link's slot, zeroed, to the next link", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const slots = new StatSlots(4);
    const kept = new HealingLink(10, undefined, null, slots);
    kept.step({ rtt: 20, loss: 0, jitter: 1 }, new Date(Date.UTC(2026, 11, 1, 10)));
    ((): void => {
      const dropped = new HealingLink(10, undefined, null, slots);
      dropped.step({ rtt: 40, loss: 2, jitter: 3 }, new Date(Date.UTC(2026, 11, 1, 10)));
    })();
    // The registry's callback runs in a task after the collection.
    for (let i = 0; i < 50 && slots.counts.free === 0; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(slots.counts).toEqual({ made: 2, free: 1 });
    const next = new HealingLink(10, undefined, null, slots);
    expect(slots.counts).toEqual({ made: 2, free: 0 });
    expect(next.stored("wan:wan0").baseline.rtt.all).toEqual({ n: 0, mean: 0, variance: 0 });
    expect(next.stored("wan:wan0").baseline.loss.hours).toEqual({});
    // The link that stayed kept its own numbers.
    expect(kept.stored("wan:wan0").baseline.rtt.all).toEqual({ n: 1, mean: 20, variance: 0 });
  });
});
