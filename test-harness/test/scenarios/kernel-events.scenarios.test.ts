/**
 * Issue 17, "react to the kernel, not only to probes", on the dual-WAN lab
 * (topologies/dual-wan.yaml): site-a's multi-link policy sends ICMP toward
 * site-b over isp1 (wan0), else isp2 (wan1). The agent follows the kernel's
 * link and address announcements (`ip monitor`), so a WAN that breaks in the
 * kernel is left without waiting for a probe to be lost:
 * - carrier lost (isp1 sets its end of the veth down: veth has no
 *   `carrier off`, EOPNOTSUPP): traffic on wan1 within 100 ms, measured from
 *   the kernel's announcement of the carrier loss to its announcement of the
 *   policy table's new route (`ip -o -ts monitor` inside site-a); the server
 *   has the report (wan0 down) at once, not at the next status tick;
 * - carrier back: traffic stays on wan1 until probes answer again and the
 *   hold-down (5 s) has passed, then moves back;
 * - wan0's address removed: traffic on wan1 within 100 ms; the agent puts the
 *   configured address back (reconcile) and traffic returns after probes;
 * - wan0's address changed: a report reaches the server at once (the status
 *   tick is 5 s); the agent puts the configured static address back beside
 *   the new one, and wan0 carries traffic again once probes confirm it.
 * Last runs (load average about 20 on 2 cores, other labs running): carrier
 * 4–28 ms, address removal 3–5 ms, carrier back → wan0 7.2–8.1 s, report on
 * the server 0.5–1.2 s after the change; about 65 s with the lab (35 s up).
 */

import { privilegedTestsEnabled } from "@tern/netlab";
import { InterfaceStatusResponse } from "@tern/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressDeleted, carrierLost, KernelMonitor, tableRouteVia } from "../../src/bench/agent/kernel-monitor.ts";
import { installIcmpQualityPolicy } from "./support/dual-wan-policy.ts";
import { SCENARIO_COMMANDS, type ScenarioLab, upScenarioLab, waitFor } from "./support/scenario-lab.ts";

const enabled = privilegedTestsEnabled("scenarios: kernel events (netlink-driven failover)", SCENARIO_COMMANDS);
const MOVE_BUDGET_MS = 100;
const TABLE = 30000;

describe.runIf(enabled)("a WAN that breaks in the kernel is left within 100 ms (issue 17)", () => {
  let s: ScenarioLab;
  let monitor: KernelMonitor | null = null;
  beforeAll(async () => {
    s = await upScenarioLab("dual-wan.yaml");
  });
  afterAll(async () => {
    await monitor?.stop();
    if (!s) return;
    await s.sh("isp1", ["ip", "link", "set", "site-a", "up"]);
    expect(await s.down()).toEqual({ namespaces: [], processes: [] });
  });

  /** The device the policy table's default route leaves by on site-a. */
  async function policyDev(): Promise<string | null> {
    const r = await s.sh("site-a", ["ip", "-4", "route", "show", "table", String(TABLE)]);
    return /\bdev (\S+)/.exec(r.stdout)?.[1] ?? null;
  }
  const on = (dev: string, limitMs: number, everyMs = 20) =>
    waitFor(limitMs, async () => ((await policyDev()) === dev ? true : `table ${TABLE} on ${await policyDev()}`), everyMs);

  async function wan0Report(): Promise<InterfaceStatusResponse> {
    const wan0 = await s.iface("site-a", "wan0");
    return s.api.get(`/api/devices/${s.deviceId("site-a")}/interfaces/${wan0.id}/status`, InterfaceStatusResponse);
  }

  it("moves traffic off a WAN whose carrier or address went, tells the server at once, and comes back after probes", async () => {
    await installIcmpQualityPolicy(s, "kernel-events", {
      maxLossPercent: 20,
      maxLatencyMs: 100,
      maxJitterMs: 50,
      holdDownSeconds: 5,
    });
    await on("wan0", 30_000, 100);
    // Probes have answered on both WANs before anything breaks.
    await new Promise((r) => setTimeout(r, 3000));
    monitor = new KernelMonitor(s.ns("site-a"));
    await monitor.ready();

    // Carrier lost at the far end.
    let from = monitor.mark();
    const brokeAt = Date.now();
    await s.sh("isp1", ["ip", "link", "set", "site-a", "down"]);
    await on("wan1", 5000, 5);
    await new Promise((r) => setTimeout(r, 200));
    const carrierMs = monitor.between(carrierLost("wan0"), tableRouteVia(TABLE, "wan1"), from);
    console.log(`kernel events: carrier lost → traffic on wan1 after ${carrierMs?.toFixed(1)} ms (kernel timestamps)`);
    expect(carrierMs).not.toBeNull();
    expect(carrierMs!).toBeLessThanOrEqual(MOVE_BUDGET_MS);
    let report: InterfaceStatusResponse | null = null;
    await waitFor(
      5000,
      async () => {
        report = await wan0Report();
        const told = report.reportedAt !== null && Date.parse(report.reportedAt) >= brokeAt;
        return told && report.state !== "unknown" && report.state.operState !== "up" ? true : JSON.stringify(report);
      },
      20,
    );
    const toldMs = Date.parse(report!.reportedAt!) - brokeAt;
    console.log(`kernel events: the server had wan0's carrier loss ${toldMs} ms after the change`);
    // The status tick is 5 s here: a report within 2 s came from the change (the agent composes it under load in ~0.5–1 s).
    expect(toldMs).toBeLessThan(2000);

    // Carrier back: not before probes answer and the hold-down passed.
    await s.sh("isp1", ["ip", "link", "set", "site-a", "up"]);
    const backAt = performance.now();
    await new Promise((r) => setTimeout(r, 2000));
    expect(await policyDev()).toBe("wan1");
    await on("wan0", 40_000, 50);
    const backMs = performance.now() - backAt;
    console.log(`kernel events: carrier back → traffic on wan0 after ${(backMs / 1000).toFixed(1)} s (probes + 5 s hold-down)`);
    expect(backMs).toBeGreaterThanOrEqual(5000);

    // Address removed on site-a's wan0: left at once; the agent puts the configured address back.
    const address = (await s.iface("site-a", "wan0")).IPv4;
    const prefix = (await s.iface("site-a", "wan0")).IPv4Mask;
    expect(address, "wan0 has a static address in the lab").toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    from = monitor.mark();
    await s.sh("site-a", ["ip", "addr", "del", `${address}/${prefix}`, "dev", "wan0"]);
    await on("wan1", 5000, 5);
    await new Promise((r) => setTimeout(r, 200));
    const addressMs = monitor.between(addressDeleted("wan0"), tableRouteVia(TABLE, "wan1"), from);
    console.log(`kernel events: address removed → traffic on wan1 after ${addressMs?.toFixed(1)} ms (kernel timestamps)`);
    console.log(
      monitor.lines
        .slice(from, from + 12)
        .map((l) => `  ${l.at.toFixed(1)} ${l.text.slice(0, 100)}`)
        .join("\n"),
    );
    expect(addressMs).not.toBeNull();
    expect(addressMs!).toBeLessThanOrEqual(MOVE_BUDGET_MS);
    await waitFor(30_000, async () =>
      (await s.sh("site-a", ["ip", "-4", "addr", "show", "dev", "wan0"])).stdout.includes(`${address}/`)
        ? true
        : "the configured address is not back",
    );
    await on("wan0", 40_000, 50);

    // Address changed (another address of the same subnet first): the server hears of it at once (the
    // agent then puts the configured address back beside it: the config owns a static WAN's address).
    const other = address!.replace(/\.(\d+)$/, (_m, n) => `.${(Number(n) % 250) + 3}`);
    const changedAt = Date.now();
    await s.sh("site-a", ["sh", "-c", `ip addr del ${address}/${prefix} dev wan0 && ip addr add ${other}/${prefix} dev wan0`]);
    let changeReport: InterfaceStatusResponse | null = null;
    await waitFor(
      5000,
      async () => {
        changeReport = await wan0Report();
        return changeReport.reportedAt !== null && Date.parse(changeReport.reportedAt) >= changedAt
          ? true
          : JSON.stringify(changeReport);
      },
      20,
    );
    const changeToldMs = Date.parse(changeReport!.reportedAt!) - changedAt;
    console.log(`kernel events: address ${address} → ${other}: a report on the server ${changeToldMs} ms after the change`);
    expect(changeToldMs).toBeLessThan(2000);
    await waitFor(30_000, async () => {
      const text = (await s.sh("site-a", ["ip", "-4", "addr", "show", "dev", "wan0"])).stdout;
      return text.includes(`${address}/`) && text.includes(`${other}/`) ? true : text;
    });
    await on("wan0", 40_000, 50);

    // The policy and labels go with the lab (one test per file): no clean-up round trip in the 90 s budget.
  });
});
