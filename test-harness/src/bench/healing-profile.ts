/**
 * Profiling aid for the healing baseline of one link (issue 14), not a bench
 * case: one sample of a link that is up, judged and learnt, timed in this
 * process two ways over the same links and samples: the in-memory link's
 * `step()` (what the server runs) and `stepLinkHealth` on the stored shape
 * (the reference; the server ran it on a shape `health()` built from the
 * link for each sample, and read the result back). Every status
 * of a connected device steps each of its tunnels and WAN links: the bench
 * fleet's device has four tunnels and two WAN links.
 *
 *   npx tsx test-harness/src/bench/healing-profile.ts
 */
import { HealingLink } from "../../../apps/server/src/gateway/live-state/healing-link.ts";
import { type LinkHealth, newLinkHealth, stepLinkHealth } from "../../../apps/server/src/services/healing/link-health.ts";

const rounds = 5;
const links = 6_000;
const samplesPerLink = 50;
const hour = 10;
const at = new Date(Date.UTC(2026, 11, 1, hour, 30));
// Figures that wobble around a baseline, with an excursion of three samples now and then: a link that meets one
// after its warm-up becomes degraded and recovers (events stay rare, as on real links).
const figures = Array.from({ length: 997 }, (_, i) => ({
  rtt: 20 + (i % 7) + (i % 211 < 3 ? 300 : 0),
  loss: i % 13 === 0 ? 1 : 0,
  jitter: 1 + (i % 5) / 4,
}));

function round(kind: "step" | "stored shape"): { usPerSample: number; events: number } {
  const set = Array.from({ length: links }, () => new HealingLink(hour));
  const shapes: LinkHealth[] = Array.from({ length: links }, newLinkHealth);
  let events = 0;
  const t0 = process.hrtime.bigint();
  for (let s = 0; s < samplesPerLink; s++)
    for (let i = 0; i < links; i++) {
      // A link's samples are consecutive figures; each link starts elsewhere in them.
      const f = figures[(s + i) % figures.length]!;
      if (kind === "step") {
        if (set[i]!.step(f, at)) events++;
      } else {
        const next = stepLinkHealth(shapes[i]!, f, at);
        shapes[i] = next.health;
        if (next.event) events++;
      }
    }
  const ns = Number(process.hrtime.bigint() - t0);
  return { usPerSample: ns / 1000 / (links * samplesPerLink), events };
}

for (let r = 0; r < rounds; r++)
  for (const kind of ["stored shape", "step"] as const) {
    const { usPerSample, events } = round(kind);
    console.log(
      `round ${r + 1} ${kind.padEnd(12)} ${usPerSample.toFixed(2)} µs a link and sample, ${(usPerSample * 6).toFixed(1)} µs a status of six links (${events} events)`,
    );
  }
