import { describe, expect, it } from "vitest";
import { newSelectionState, type PolicyLink, selectLink } from "../../../src/drivers/policy/index.ts";
import type { LinkQuality } from "../../../src/probes/index.ts";

const links: PolicyLink[] = [
  { key: "wan:wan0", label: "A", via: "10.1.0.1", dev: "wan0" },
  { key: "wan:wan1", label: "B", via: "10.2.0.1", dev: "wan1" },
];
const thresholds = { maxLossPercent: 2, maxLatencyMs: 150, maxJitterMs: 30, holdDownSeconds: 10 };
const q = (over: Partial<LinkQuality> = {}): LinkQuality => ({
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
  ...over,
});

describe("link-quality selection", () => {
  it("starts on the first label, leaves a failing link at once, and returns only after the hold-down", () => {
    const quality: Record<string, LinkQuality | null> = { "wan:wan0": q(), "wan:wan1": q() };
    const state = newSelectionState();
    const pick = (t: number) => selectLink(state, links, (k) => quality[k] ?? null, thresholds, t * 1000);
    expect(pick(0)).toBe("wan:wan0");
    quality["wan:wan0"] = q({ lossPercent: 10 });
    expect(pick(1)).toBe("wan:wan1");
    expect(state.reason).toBe("wan:wan0 (loss 10% > 2%) → wan:wan1 (loss 0%, rtt 10 ms, jitter 1 ms)");
    quality["wan:wan0"] = q();
    expect(pick(2)).toBe("wan:wan1");
    expect(pick(11.9)).toBe("wan:wan1");
    expect(pick(12)).toBe("wan:wan0");
  });

  it("restarts the hold-down when the preferred link flaps", () => {
    const quality: Record<string, LinkQuality> = { "wan:wan0": q({ up: false }), "wan:wan1": q() };
    const state = newSelectionState();
    const pick = (t: number) => selectLink(state, links, (k) => quality[k]!, thresholds, t * 1000);
    expect(pick(0)).toBe("wan:wan1");
    quality["wan:wan0"] = q();
    pick(1);
    quality["wan:wan0"] = q({ jitterMs: 50 });
    expect(pick(6)).toBe("wan:wan1");
    quality["wan:wan0"] = q();
    expect(pick(7)).toBe("wan:wan1");
    expect(pick(16)).toBe("wan:wan1");
    expect(pick(17)).toBe("wan:wan0");
  });

  it("judges RTT and jitter too, falls back when nothing qualifies, counts unmeasured links as eligible", () => {
    const quality: Record<string, LinkQuality | null> = { "wan:wan0": q({ rttMs: 200 }), "wan:wan1": q({ jitterMs: 31 }) };
    const state = newSelectionState();
    expect(selectLink(state, links, (k) => quality[k] ?? null, thresholds, 0)).toBeNull();
    expect(state.reason).toBe("none → fallback (no eligible link)");
    quality["wan:wan1"] = null;
    expect(selectLink(state, links, (k) => quality[k] ?? null, thresholds, 1000)).toBe("wan:wan1");
  });

  it("priority order ignores thresholds and has no hold-down", () => {
    const quality: Record<string, LinkQuality> = { "wan:wan0": q({ lossPercent: 50 }), "wan:wan1": q() };
    const state = newSelectionState();
    expect(selectLink(state, links, (k) => quality[k]!, null, 0)).toBe("wan:wan0");
    quality["wan:wan0"] = q({ up: false });
    expect(selectLink(state, links, (k) => quality[k]!, null, 1000)).toBe("wan:wan1");
    quality["wan:wan0"] = q();
    expect(selectLink(state, links, (k) => quality[k]!, null, 1001)).toBe("wan:wan0");
  });
});
