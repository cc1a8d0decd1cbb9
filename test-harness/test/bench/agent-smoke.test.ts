/**
 * The agent benchmark cases in their quickest form, in real lab namespaces
 * with the real agent and daemons. They check that measurements are well
 * formed and sane (RSS > 0, loss within a wide band of the impairment …),
 * never how fast anything is.
 */
import { privilegedTestsEnabled } from "@tern/netlab";
import { describe, expect, it } from "vitest";
import { DAEMON_COMMANDS, LAB_COMMANDS } from "../../src/bench/agent/lab.ts";
import { linkStats, parseFpingCount } from "../../src/bench/agent/link-points.ts";
import { agentConvergence } from "../../src/bench/cases/agent-convergence.ts";
import { agentFailover } from "../../src/bench/cases/agent-failover.ts";
import { agentFootprint } from "../../src/bench/cases/agent-footprint.ts";
import { agentMeasurement } from "../../src/bench/cases/agent-measurement.ts";
import { agentPathFailover } from "../../src/bench/cases/agent-path-failover.ts";
import { agentStart } from "../../src/bench/cases/agent-start.ts";
import { fpingLink } from "../../src/bench/cases/fping-link.ts";
import { nodeIdle } from "../../src/bench/cases/node-idle.ts";
import { nodeStart } from "../../src/bench/cases/node-start.ts";
import { firstLossDetectedMs } from "../../src/bench/cases/policy-bound.ts";
import { rawApply } from "../../src/bench/cases/raw-apply.ts";
import { masterDownMs, vrrpBound } from "../../src/bench/cases/vrrp-bound.ts";
import type { BenchContext, Measurement } from "../../src/bench/types.ts";

const ctx: BenchContext = {
  mode: "quick",
  env: { databaseUrl: "postgres://unused", tmpDir: "/tmp" },
  log: () => {},
  measure: () => Promise.reject(new Error("smoke tests run cases alone")),
};

function value(m: Measurement, key: string): number {
  const f = m.figures.find((x) => x.key === key);
  if (!f) throw new Error(`no figure ${key}; figures: ${m.figures.map((x) => x.key).join(", ")}`);
  expect(f.value, key).not.toBeNull();
  expect(Number.isFinite(f.value), key).toBe(true);
  return f.value!;
}

describe("agent bench helpers", () => {
  it("computes the VRRPv3 master-down interval", async () => {
    expect(masterDownMs({ advertIntervalMs: 100, backupPriority: 100 })).toBeCloseTo(360.94, 2);
    const m = await vrrpBound.run({ advertIntervalMs: 1000, backupPriority: 255 }, ctx);
    expect(value(m, "master-down-ms")).toBeCloseTo(3003.9, 1);
  });

  it("computes the expected first-loss detection of a prober", () => {
    expect(firstLossDetectedMs({ probeIntervalMs: 500, timeoutMs: 1000, lossPercent: 50 })).toBe(1750);
    expect(firstLossDetectedMs({ probeIntervalMs: 500, timeoutMs: 1000, lossPercent: 100 })).toBe(1250);
  });

  it("reads fping -C output and computes loss, RTT and jitter like the agent's window", () => {
    const rtts = parseFpingCount("10.0.0.1 : 1.00 - 3.00 2.00\n", "10.0.0.1");
    expect(rtts).toEqual([1, null, 3, 2]);
    expect(linkStats(rtts)).toEqual({ lossPercent: 25, rttMs: 2, jitterMs: 1.5, answered: 3 });
    expect(() => parseFpingCount("nothing\n", "10.0.0.1")).toThrow(/no result for 10\.0\.0\.1/);
  });
});

const enabled = privilegedTestsEnabled("bench agent cases", [...LAB_COMMANDS, ...DAEMON_COMMANDS, "iptables", "gcc", "ping"]);

describe.runIf(enabled)("agent bench cases, smallest runs", () => {
  it("agent-footprint reads the running agent's RSS and CPU; node-idle the bare runtime's", async () => {
    const m = await agentFootprint.run({ settleMs: 300, windowMs: 700 }, ctx);
    for (const key of ["idle-rss", "apply-peak-rss", "running-rss"]) expect(value(m, key)).toBeGreaterThan(20 * 2 ** 20);
    expect(value(m, "apply-peak-rss")).toBeGreaterThanOrEqual(value(m, "idle-rss"));
    for (const key of ["idle-cpu", "apply-cpu", "running-cpu"]) expect(value(m, key)).toBeGreaterThanOrEqual(0);
    expect(m.figures.every((f) => f.baseline?.case === "node-idle")).toBe(true);
    const base = await nodeIdle.run({ settleMs: 300, windowMs: 700 }, ctx);
    expect(value(base, "rss")).toBeGreaterThan(10 * 2 ** 20);
  }, 90_000);

  it("agent-start times --help and run-to-connected of the bundled agent; node-start bare node's start", async () => {
    const m = await agentStart.run({ runs: 2 }, ctx);
    expect(value(m, "help-ms")).toBeGreaterThan(0);
    expect(value(m, "connected-ms")).toBeGreaterThan(0);
    expect(m.figures.every((f) => f.baseline?.case === "node-start")).toBe(true);
    const base = await nodeStart.run({ runs: 2 }, ctx);
    // Starting node is part of running --help: the baseline is the smaller of the two.
    expect(value(base, "start-ms")).toBeLessThan(value(m, "help-ms"));
  }, 90_000);

  it("agent-measurement and fping-link see the lab's loss and delay within a wide band", async () => {
    const point = { lossPercent: 10, delayMs: 30, intervalMs: 100, probes: 30 };
    for (const m of [await agentMeasurement.run(point, ctx), await fpingLink.run(point, ctx)]) {
      expect(value(m, "loss")).toBeGreaterThanOrEqual(0);
      expect(value(m, "loss")).toBeLessThanOrEqual(40);
      expect(value(m, "rtt")).toBeGreaterThan(25);
      expect(value(m, "rtt")).toBeLessThan(100);
      expect(value(m, "jitter")).toBeGreaterThanOrEqual(0);
    }
  }, 90_000);

  it("agent-convergence applies a full config, brings the tunnel up and times a one-field change; raw-apply does the same by script", async () => {
    const m = await agentConvergence.run({ changes: 1 }, ctx);
    expect(value(m, "full-ms")).toBeGreaterThan(0);
    expect(value(m, "tunnel-ms")).toBeGreaterThan(0);
    expect(value(m, "one-field-ms")).toBeGreaterThan(0);
    expect(m.details).toMatchObject({ oneFieldChangedDrivers: ["firewall"] });
    expect(Object.keys(m.details!.fullDriverMs as object)).toEqual(
      expect.arrayContaining(["links", "firewall", "ikev2", "bgp", "vrrp", "dhcp", "policy"]),
    );
    const raw = await rawApply.run({ changes: 1 }, ctx);
    for (const key of ["full-ms", "tunnel-ms", "one-field-ms"]) expect(value(raw, key)).toBeGreaterThan(0);
  }, 120_000);

  it("agent-failover moves the virtual IP to the backup and the host is answered again", async () => {
    const m = await agentFailover.run({ advertIntervalMs: 100, repeats: 1 }, ctx);
    // Within a wide band of the protocol's master-down interval (361 ms at these settings).
    expect(value(m, "to-serving-ms")).toBeGreaterThan(50);
    expect(value(m, "to-serving-ms")).toBeLessThan(5000);
    expect(value(m, "to-master-ms")).toBeGreaterThan(0);
  }, 90_000);

  it("agent-path-failover moves the policy's traffic off a degraded WAN", async () => {
    const m = await agentPathFailover.run({ lossPercent: 100, repeats: 1, warmMs: 2000 }, ctx);
    expect(value(m, "moved-ms")).toBeGreaterThan(0);
    expect(value(m, "moved-ms")).toBeLessThan(30_000);
  }, 90_000);
});
