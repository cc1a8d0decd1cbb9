/** The condition state machine and thresholds with hysteresis (pure). */
import { describe, expect, it } from "vitest";
import { newCondition, type Observed, observe, type Step, thresholdLevel } from "../../src/notify/conditions.ts";

function run(observations: Observed[], raiseAfter = 1, clearAfter = 3): Step[] {
  const state = newCondition();
  return observations.map((o) => observe(state, o, raiseAfter, clearAfter));
}
const kinds = (steps: Step[]) =>
  steps.map((s) => (s === null ? "-" : s.kind === "raise" ? `raise:${s.severity}${s.flap ? ":flap" : ""}` : "resolve"));

describe("observe", () => {
  it("raises on the first bad figure, resolves after three good ones", () => {
    expect(kinds(run(["ok", "warning", "warning", "ok", "ok", "ok", "ok"]))).toEqual([
      "-",
      "raise:warning",
      "-",
      "-",
      "-",
      "resolve",
      "-",
    ]);
  });

  it("confirms a down state before raising it", () => {
    expect(kinds(run(["critical", "ok", "critical", "critical", "critical"], 3))).toEqual(["-", "-", "-", "-", "raise:critical"]);
  });

  it("escalates at once, never de-escalates", () => {
    expect(kinds(run(["warning", "critical", "warning", "warning"]))).toEqual(["raise:warning", "raise:critical", "-", "-"]);
  });

  it("a flap before the all-clear is the same notification raised again (its count goes up)", () => {
    expect(kinds(run(["warning", "ok", "warning", "ok", "ok", "warning", "ok", "ok", "ok"]))).toEqual([
      "raise:warning",
      "-",
      "raise:warning:flap",
      "-",
      "-",
      "raise:warning:flap",
      "-",
      "-",
      "resolve",
    ]);
  });

  it("hold changes nothing: no streak is broken or extended", () => {
    expect(kinds(run(["warning", "ok", "hold", "ok", "hold", "ok"]))).toEqual(["raise:warning", "-", "-", "-", "-", "resolve"]);
    expect(kinds(run(["critical", "hold", "critical"], 2))).toEqual(["-", "-", "raise:critical"]);
  });
});

describe("observe with timing (figures on evidence)", () => {
  it("raises, escalates and resolves only after the observation held for the sustain period", () => {
    const state = newCondition();
    const at = (now: number, o: Observed) => observe(state, o, 1, 1, { now, sustainMs: 30 });
    expect(at(0, "warning")).toBeNull();
    expect(at(10, "hold")).toBeNull();
    expect(at(20, "warning")).toBeNull();
    expect(at(30, "warning")).toEqual({ kind: "raise", severity: "warning", flap: false });
    expect(at(35, "critical")).toBeNull();
    expect(at(50, "warning")).toBeNull(); // the higher streak is broken
    expect(at(55, "critical")).toBeNull();
    expect(at(85, "critical")).toEqual({ kind: "raise", severity: "critical", flap: false });
    expect(at(90, "ok")).toBeNull();
    expect(at(100, "warning")).toBeNull(); // a short good streak is no flap on evidence
    expect(at(110, "ok")).toBeNull();
    expect(at(139, "ok")).toBeNull();
    expect(at(140, "ok")).toEqual({ kind: "resolve" });
  });
});

describe("thresholdLevel", () => {
  const t = { warning: 300, critical: 600 };

  it("maps a figure to its severity", () => {
    expect(thresholdLevel(100, t, "ok")).toBe("ok");
    expect(thresholdLevel(300, t, "ok")).toBe("warning");
    expect(thresholdLevel(599, t, "ok")).toBe("warning");
    expect(thresholdLevel(600, t, "ok")).toBe("critical");
  });

  it("holds inside the hysteresis band below the lowest threshold while open", () => {
    expect(thresholdLevel(280, t, "warning")).toBe("hold");
    expect(thresholdLevel(271, t, "critical")).toBe("hold");
    expect(thresholdLevel(269, t, "warning")).toBe("ok");
    // Nothing open: no band.
    expect(thresholdLevel(280, t, "ok")).toBe("ok");
  });

  it("a value hovering at the threshold raises once and never flaps", () => {
    const state = newCondition();
    const steps = [302, 298, 301, 295, 299, 304, 290].map((v) => observe(state, thresholdLevel(v, t, state.open), 1, 3));
    expect(kinds(steps)).toEqual(["raise:warning", "-", "-", "-", "-", "-", "-"]);
    // Well below: resolved after the all-clear.
    const after = [100, 100, 100].map((v) => observe(state, thresholdLevel(v, t, state.open), 1, 3));
    expect(kinds(after)).toEqual(["-", "-", "resolve"]);
  });

  it("uses whichever thresholds are set; none set holds", () => {
    expect(thresholdLevel(50, { warning: null, critical: 40 }, "ok")).toBe("critical");
    expect(thresholdLevel(37, { warning: null, critical: 40 }, "critical")).toBe("hold");
    expect(thresholdLevel(50, { warning: null, critical: null }, "ok")).toBe("hold");
  });
});
