import { describe, expect, it } from "vitest";
import { impairmentChange } from "../src/cli/commands/impair.ts";
import { LabError } from "../src/errors.ts";
import { renderDelayRules, renderLossTable, tbfArgs } from "../src/lab/impair/emulated.ts";
import { formatImpairment } from "../src/lab/impair/index.ts";
import { netemArgs } from "../src/lab/impair/netem.ts";
import type { AttachmentTarget } from "../src/lab/impair/types.ts";
import { Impairment } from "../src/topology/schema.ts";

const target = (id: string, queue: number, i: Partial<Impairment>): AttachmentTarget => ({
  id,
  cloudNs: "tn-lab-abc123-inet",
  cloudIf: id.split(":")[1]!,
  queue,
  impairment: Impairment.parse(i),
});

describe("emulated impairment rendering", () => {
  const targets = [
    target("inet:site-a", 1, { lossPercent: 5, delayMs: 30, jitterMs: 5 }),
    target("inet:site-b", 2, { lossPercent: 0.25 }),
    target("inet:site-c", 3, {}),
  ];

  it("renders one atomic nft table with a numgen drop rule per lossy interface (0.01 % steps)", () => {
    expect(renderLossTable(targets)).toBe(
      [
        "table ip tern_lab_impair",
        "delete table ip tern_lab_impair",
        "table ip tern_lab_impair {",
        "  chain loss {",
        "    type filter hook postrouting priority -300; policy accept;",
        '    oifname "site-a" numgen random mod 10000 < 500 counter drop',
        '    oifname "site-b" numgen random mod 10000 < 25 counter drop',
        "  }",
        "}",
        "",
      ].join("\n"),
    );
  });

  it("renders only the table removal when nothing is lossy", () => {
    expect(renderLossTable([targets[2]!])).toBe("table ip tern_lab_impair\ndelete table ip tern_lab_impair\n");
  });

  it("renders an NFQUEUE rule (own queue, bypass when no helper) only for delayed interfaces", () => {
    expect(renderDelayRules(targets)).toBe(
      [
        "*mangle",
        ":TERN-LAB-DELAY - [0:0]",
        "-A TERN-LAB-DELAY -o site-a -j NFQUEUE --queue-num 1 --queue-bypass",
        "COMMIT",
        "",
      ].join("\n"),
    );
  });

  it("sizes the tbf burst at 10 ms of traffic, never below four full frames", () => {
    expect(tbfArgs(10)).toEqual(["rate", "10mbit", "burst", "12500", "latency", "50ms"]);
    expect(tbfArgs(1)).toEqual(["rate", "1mbit", "burst", "6056", "latency", "50ms"]);
  });
});

describe("netem arguments", () => {
  it("combines delay, jitter, loss and rate in one qdisc", () => {
    expect(netemArgs(Impairment.parse({ lossPercent: 5, delayMs: 30, jitterMs: 5, rateMbit: 10 }))).toEqual([
      "limit",
      "100000",
      "delay",
      "30ms",
      "5ms",
      "loss",
      "5%",
      "rate",
      "10mbit",
    ]);
    expect(netemArgs(Impairment.parse({}))).toBeNull();
  });
});

describe("impair flags", () => {
  it("turns flags into a partial change; --rate none removes the limit", () => {
    expect(impairmentChange({ loss: "5", delay: "30", clear: false })).toEqual({
      lossPercent: 5,
      delayMs: 30,
      jitterMs: undefined,
      rateMbit: undefined,
    });
    expect(impairmentChange({ rate: "none", clear: false }).rateMbit).toBeNull();
    expect(() => impairmentChange({ loss: "five", clear: false })).toThrow(LabError);
  });

  it("formats an impairment for status lines", () => {
    expect(formatImpairment(Impairment.parse({ lossPercent: 5, delayMs: 30, jitterMs: 5, rateMbit: 10 }))).toBe(
      "loss 5% delay 30ms ±5ms rate 10Mbit/s",
    );
    expect(formatImpairment(Impairment.parse({}))).toBe("none");
  });
});
