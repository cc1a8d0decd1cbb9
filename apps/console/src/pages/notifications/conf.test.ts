import { describe, expect, it } from "vitest";
import { parseRecipients, ruleRows, tunnelThresholds } from "./conf.ts";

describe("parseRecipients", () => {
  it("splits on lines, commas and spaces, drops blanks and repeats", () => {
    expect(parseRecipients("a@x.org, b@x.org\n\n a@x.org;c@x.org ")).toEqual(["a@x.org", "b@x.org", "c@x.org"]);
    expect(parseRecipients("   ")).toEqual([]);
  });
});

describe("ruleRows", () => {
  it("lists every event in the given order, missing ones as defaults", () => {
    const rows = ruleRows({ "tunnel-rtt": { enabled: false } }, ["device-connection", "tunnel-rtt"]);
    expect(rows).toEqual([
      { event: "device-connection", rule: {} },
      { event: "tunnel-rtt", rule: { enabled: false } },
    ]);
  });
});

describe("tunnelThresholds", () => {
  it("takes the tunnel RTT and loss thresholds that are set", () => {
    expect(
      tunnelThresholds({
        "tunnel-rtt": { warningThreshold: 300, criticalThreshold: 600 },
        "tunnel-drop-rate": { warningThreshold: 5, criticalThreshold: null },
      }),
    ).toEqual({ rtt: { warning: 300, critical: 600 } });
  });
});
