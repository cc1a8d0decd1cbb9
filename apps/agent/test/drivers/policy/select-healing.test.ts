/** Healing in path selection: damped links are not eligible; avoided links only when nothing else is. */
import { describe, expect, it } from "vitest";
import { newSelectionState, type PolicyLink, selectLink } from "../../../src/drivers/policy/index.ts";
import type { LinkQuality } from "../../../src/probes/index.ts";

const links: PolicyLink[] = [
  { key: "wan:wan0", label: "A", via: "10.1.0.1", dev: "wan0" },
  { key: "wan:wan1", label: "B", via: "10.2.0.1", dev: "wan1" },
];
const thresholds = { maxLossPercent: 2, maxLatencyMs: 150, maxJitterMs: 30, holdDownSeconds: 0 };
const good: LinkQuality = {
  key: "",
  up: true,
  lossPercent: 0,
  rttMs: 10,
  srttMs: 10,
  jitterMs: 1,
  samples: 30,
  windowMs: 30_000,
  sent: 30,
  received: 30,
  target: "",
  sinceLastReplyMs: 100,
};

describe("selection with healing", () => {
  it("a held-down (damped) link is skipped although its figures are good, and taken back once released", () => {
    const state = newSelectionState();
    let held = false;
    const healing = { heldDown: (k: string) => (held && k === "wan:wan0" ? "damped: flapping" : null), avoid: new Set<string>() };
    expect(selectLink(state, links, () => good, thresholds, 0, healing)).toBe("wan:wan0");
    held = true;
    expect(selectLink(state, links, () => good, thresholds, 1000, healing)).toBe("wan:wan1");
    expect(state.reason).toBe("wan:wan0 (damped: flapping) → wan:wan1 (loss 0%, rtt 10 ms, jitter 1 ms)");
    held = false;
    expect(selectLink(state, links, () => good, thresholds, 2000, healing)).toBe("wan:wan0");
  });

  it("an avoided link is left for another eligible one, but used when it is the only eligible link", () => {
    const avoid = { heldDown: () => null, avoid: new Set(["wan:wan0"]) };
    expect(selectLink(newSelectionState(), links, () => good, thresholds, 0, avoid)).toBe("wan:wan1");
    const down = (k: string) => (k === "wan:wan1" ? { ...good, up: false } : good);
    expect(selectLink(newSelectionState(), links, down, thresholds, 0, avoid)).toBe("wan:wan0");
  });
});
