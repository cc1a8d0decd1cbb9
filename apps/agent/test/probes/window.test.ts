import { describe, expect, it } from "vitest";
import { decodeProbe, encodeProbe, fpingGapMs, parseFpingLine, probeTimeoutMs, QualityWindow } from "../../src/probes/index.ts";

describe("QualityWindow", () => {
  it("computes loss, window-mean RTT, smoothed RTT and RFC 3550 interarrival jitter", () => {
    const w = new QualityWindow(10);
    [10, 20, null, 10, 30].forEach((rtt, i) => {
      w.record(i + 1, rtt);
    });
    const s = w.stats();
    expect(s.samples).toBe(5);
    expect(s.lossPercent).toBe(20);
    expect(s.rttMs).toBe(17.5);
    // J += (|D| − J)/16 over consecutive answers: |D| = 10, 10, 20 → 0.625 → 1.2109375 → 2.38525390625
    expect(s.jitterMs).toBeCloseTo(2.38525390625, 12);
    // srtt: 10 → 11.25 → 11.09375 → 13.45703125
    expect(s.srttMs).toBeCloseTo(13.45703125, 9);
  });

  it("slides: only the newest `size` probes count", () => {
    const w = new QualityWindow(3);
    for (let i = 1; i <= 5; i++) w.record(i, i <= 2 ? null : 5);
    expect(w.stats()).toMatchObject({ samples: 3, lossPercent: 0, jitterMs: 0 });
    expect(w.totals).toEqual({ answered: 3, lost: 2 });
  });

  it("steps jitter in sequence order only and ignores a second result for the same probe", () => {
    const w = new QualityWindow(10);
    w.record(2, 20);
    w.record(1, 10); // older than the newest answer: counted, but does not step the jitter back
    w.record(3, 10);
    w.record(3, 99);
    expect(w.stats()).toMatchObject({ samples: 3, rttMs: 40 / 3, jitterMs: 10 / 16 });
  });

  it("jitter converges to the mean |D| as RFC 3550's estimator does", () => {
    const w = new QualityWindow(10);
    for (let i = 1; i <= 400; i++) w.record(i, i % 2 ? 20 : 30);
    expect(w.stats().jitterMs).toBeCloseTo(10, 6);
  });

  it("says how long the window is and keeps lifetime counts", () => {
    let now = 1000;
    const w = new QualityWindow(5, 200, () => now);
    for (let i = 1; i <= 8; i++) {
      w.record(i, i === 8 ? null : 1);
      now += 200;
    }
    // the newest 5 probes were recorded 200 ms apart: 4 gaps + one interval
    expect(w.stats()).toMatchObject({ samples: 5, lossPercent: 20, windowMs: 1000 });
    expect(w.totals).toEqual({ answered: 7, lost: 1 });
  });

  it("startAt drops earlier probes from the window but not from the lifetime totals", () => {
    const w = new QualityWindow(10);
    for (let i = 1; i <= 6; i++) w.record(i, null);
    w.startAt(7);
    w.record(7, 5);
    w.record(3, null); // a late result for a probe before the start
    w.record(8, 5);
    expect(w.stats()).toMatchObject({ samples: 2, lossPercent: 0 });
    expect(w.totals).toEqual({ answered: 2, lost: 7 });
  });

  it("reports zeros and no samples before the first probe", () => {
    expect(new QualityWindow(5).stats()).toEqual({ lossPercent: 0, rttMs: 0, srttMs: 0, jitterMs: 0, samples: 0, windowMs: 0 });
  });

  it("shrinks when resized", () => {
    const w = new QualityWindow(10);
    for (let i = 1; i <= 10; i++) w.record(i, i % 2 ? null : 1);
    w.resize(4);
    expect(w.stats().samples).toBe(4);
    expect(w.stats().lossPercent).toBe(50);
  });
});

describe("probe codec and fping parsing", () => {
  it("round-trips a probe and rejects foreign packets", () => {
    const p = { type: "reply" as const, session: 0xdeadbeef, seq: 42, timestampNs: 123456789012345n };
    expect(decodeProbe(encodeProbe(p))).toEqual(p);
    expect(decodeProbe(Buffer.from("hello world, not a probe"))).toBeNull();
    const bad = encodeProbe(p);
    bad.writeUInt8(9, 5);
    expect(decodeProbe(bad)).toBeNull();
  });

  it("parses fping loop lines: answers, time-outs; ignores duplicates and errors", () => {
    expect(parseFpingLine("10.0.0.1 : [3], 64 bytes, 0.482 ms (0.51 avg, 0% loss)")).toEqual({
      target: "10.0.0.1",
      seq: 3,
      rttMs: 0.482,
    });
    expect(parseFpingLine("10.0.0.1    : [4], timed out (0.51 avg, 20% loss)")).toEqual({
      target: "10.0.0.1",
      seq: 4,
      rttMs: null,
    });
    expect(parseFpingLine("10.0.0.1 : duplicate for [3], 64 bytes, 0.50 ms")).toBeNull();
    expect(parseFpingLine("ICMP Host Unreachable from 10.0.0.2 for ICMP Echo sent to 10.0.0.1")).toBeNull();
  });

  it("narrows fping's gap between echoes so every target is probed once a period", () => {
    // fping's default 10 ms while the targets fit; narrower when they do not (3 every 5 ms, 25 every 200 ms).
    expect(fpingGapMs(200, 3)).toBe(10);
    expect(fpingGapMs(200, 20)).toBe(10);
    expect(fpingGapMs(200, 25)).toBe(8);
    expect(fpingGapMs(5, 1)).toBe(5);
    expect(fpingGapMs(5, 3)).toBe(1);
    expect(fpingGapMs(100, 500)).toBe(1);
    expect(fpingGapMs(100, 0)).toBe(10);
  });

  it("times probes out after one interval, at least 1 s, at most the down time", () => {
    expect(probeTimeoutMs(200, 15000)).toBe(1000);
    expect(probeTimeoutMs(5000, 15000)).toBe(5000);
    expect(probeTimeoutMs(5000, 3000)).toBe(3000);
  });
});
