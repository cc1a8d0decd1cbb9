/** A status message judged against the rules (pure): which conditions it says something about, and what. */
import { randomUUID } from "node:crypto";
import type { InterfaceState, NotificationRules } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import type { DeviceContext } from "../../src/notify/device-context.ts";
import { evaluateStatus, type Observation } from "../../src/notify/evaluate-status.ts";
import { notificationDedupKey } from "../../src/services/notifications/events.ts";
import { completeRules } from "../../src/services/notifications/settings.ts";

const deviceId = randomUUID();
const wan = randomUUID();
const lan = randomUUID();
const t1 = randomUUID();
const t2 = randomUUID();
const t3 = randomUUID();

const context: DeviceContext = {
  deviceId,
  orgId: randomUUID(),
  name: "edge-1",
  interfaces: [
    { id: wan, devId: "pci:3", name: "eth0", type: "WAN" },
    { id: lan, devId: "pci:4", name: "eth1", type: "LAN" },
  ],
  bgpNeighbors: [
    { ip: "10.100.0.3", remoteASN: 65002 },
    { ip: "10.100.0.5", remoteASN: 65003 },
  ],
  tunnels: new Map([
    [
      t1,
      {
        id: t1,
        num: 1,
        side: "a",
        localInterfaceId: wan,
        farName: "edge-2",
        farDeviceId: null,
        thresholds: { rtt: null, dropRate: null },
      },
    ],
    [
      t2,
      {
        id: t2,
        num: 2,
        side: "b",
        localInterfaceId: wan,
        farName: "edge-3",
        farDeviceId: null,
        thresholds: { rtt: { warning: 50, critical: 100 }, dropRate: null },
      },
    ],
    [
      t3,
      {
        id: t3,
        num: 3,
        side: "a",
        localInterfaceId: wan,
        farName: "aws",
        farDeviceId: null,
        thresholds: { rtt: null, dropRate: null },
      },
    ],
  ]),
  loadedAt: Date.now(),
};

function iface(devId: string, fields: Partial<InterfaceState> = {}): InterfaceState {
  return {
    devId,
    name: devId,
    operState: "up",
    IPv4: "192.0.2.1",
    IPv4Mask: 24,
    gateway: "",
    mac: "02:00:00:00:00:01",
    mtu: 1500,
    rxBytes: 0,
    txBytes: 0,
    publicIp: "",
    publicPort: null,
    lte: null,
    ...fields,
  };
}

function evaluate(overrides: { rules?: NotificationRules; tunnels?: Parameters<typeof evaluateStatus>[0]["tunnels"] } = {}) {
  return evaluateStatus({
    context,
    rules: completeRules(overrides.rules),
    tunnels: overrides.tunnels ?? [
      { id: t1, side: "a", up: true, loss: 1, rtt: 350, jitter: 2, samples: 30 },
      { id: t2, side: "b", up: true, loss: 30, rtt: 60, jitter: 2, samples: 30 },
      { id: t3, side: "a", up: false, loss: 100, rtt: 0, jitter: 0, samples: 30 },
      { id: randomUUID(), side: "a", up: false, loss: 100, rtt: 0, jitter: 0, samples: 30 },
    ],
    status: {
      interfaces: [iface("pci:3"), iface("pci:4", { IPv4: "" })],
      bgp: {
        running: true,
        routerId: "10.0.0.1",
        localASN: 65001,
        neighbors: [
          { ip: "10.100.0.3", remoteASN: 65002, state: "Established", uptimeSeconds: 9, prefixesReceived: 1, prefixesSent: 1 },
          { ip: "10.100.0.5", remoteASN: 65003, state: "Active", uptimeSeconds: 0, prefixesReceived: 0, prefixesSent: 0 },
        ],
      },
      health: { uptimeSeconds: 5, cpuPercent: 1, memoryPercent: 90, diskPercent: 10, temperatureC: null },
    },
    openOf: () => "ok",
    confirmReports: 3,
  });
}

const find = (obs: Observation[], event: string, target: Record<string, string>) =>
  obs.find(
    (o) =>
      o.condition.eventType === event &&
      Object.entries(target).every(([k, v]) => (o.condition.targets as Record<string, unknown>)[k] === v),
  );

describe("evaluateStatus", () => {
  it("judges each tunnel end with the tunnel's own thresholds, else the rule's", () => {
    const obs = evaluate();
    expect(find(obs, "tunnel-rtt", { tunnelId: t1 })).toMatchObject({ observed: "warning", raiseAfter: 1 });
    expect(find(obs, "tunnel-rtt", { tunnelId: t1 })?.details()).toBe(
      "tunnel 1 to edge-2: round-trip time 350 ms (warning 300 ms, critical 600 ms)",
    );
    // Tunnel 2 has its own RTT thresholds (50/100): 60 ms is a warning there, not under the rule's 300.
    expect(find(obs, "tunnel-rtt", { tunnelId: t2 })?.observed).toBe("warning");
    expect(find(obs, "tunnel-drop-rate", { tunnelId: t2 })?.observed).toBe("critical");
    expect(find(obs, "tunnel-drop-rate", { tunnelId: t1 })?.observed).toBe("ok");
    // A tunnel that is down: connection is bad after confirmation, its figures say nothing.
    expect(find(obs, "tunnel-connection", { tunnelId: t3 })).toMatchObject({ observed: "critical", raiseAfter: 3 });
    expect(find(obs, "tunnel-connection", { tunnelId: t3 })?.details()).toBe("tunnel 3 to aws is down, as reported by edge-1");
    expect(find(obs, "tunnel-rtt", { tunnelId: t3 })?.observed).toBe("hold");
    expect(find(obs, "tunnel-connection", { tunnelId: t1 })?.observed).toBe("ok");
    // A tunnel the device is not an end of is ignored.
    expect(obs.filter((o) => o.condition.eventType === "tunnel-connection")).toHaveLength(3);
  });

  it("judges a WAN link by the best path through it", () => {
    const obs = evaluate();
    // Up tunnels on eth0: RTT 350 and 60: the link's best is 60, fine; loss 1 and 30: best 1, fine.
    expect(find(obs, "link-rtt", { interfaceId: wan })).toMatchObject({ observed: "ok" });
    expect(find(obs, "link-drop-rate", { interfaceId: wan })).toMatchObject({ observed: "ok" });
    const bad = evaluate({
      tunnels: [
        { id: t1, side: "a", up: true, loss: 25, rtt: 700, jitter: 2, samples: 30 },
        { id: t2, side: "b", up: true, loss: 22, rtt: 650, jitter: 2, samples: 30 },
      ],
    });
    expect(find(bad, "link-rtt", { interfaceId: wan })).toMatchObject({ observed: "critical" });
    expect(find(bad, "link-rtt", { interfaceId: wan })?.details()).toContain("link eth0 of edge-1: best round-trip time 650 ms");
    expect(find(bad, "link-drop-rate", { interfaceId: wan })?.observed).toBe("critical");
    // Every tunnel of the link down: nothing to judge the link by.
    const down = evaluate({ tunnels: [{ id: t3, side: "a", up: false, loss: 100, rtt: 0, jitter: 0, samples: 30 }] });
    expect(find(down, "link-rtt", { interfaceId: wan })?.observed).toBe("hold");
  });

  it("judges interfaces, BGP neighbors and health", () => {
    const obs = evaluate();
    expect(find(obs, "missing-interface-ip", { interfaceId: lan })).toMatchObject({ observed: "warning", raiseAfter: 3 });
    expect(find(obs, "missing-interface-ip", { interfaceId: wan })?.observed).toBe("ok");
    expect(find(obs, "interface-down", { interfaceId: wan })?.observed).toBe("ok");
    expect(find(obs, "bgp-neighbor-down", { bgpNeighbor: "10.100.0.5" })).toMatchObject({ observed: "warning" });
    expect(find(obs, "bgp-neighbor-down", { bgpNeighbor: "10.100.0.5" })?.details()).toBe(
      "BGP neighbor 10.100.0.5 (AS 65003) of edge-1 is Active",
    );
    expect(find(obs, "bgp-neighbor-down", { bgpNeighbor: "10.100.0.3" })?.observed).toBe("ok");
    expect(find(obs, "device-memory-usage", {})?.observed).toBe("warning");
    expect(find(obs, "hard-drive-usage", {})?.observed).toBe("ok");
  });

  it("a disabled rule raises nothing (bad becomes hold) but still lets what is open clear", () => {
    const obs = evaluate({
      rules: {
        "tunnel-rtt": {
          enabled: false,
          warningThreshold: 300,
          criticalThreshold: 600,
          thresholdUnit: "ms",
          severity: "warning",
          immediateEmail: false,
          resolvedAlert: true,
          sendWebHook: false,
        },
      },
    });
    expect(find(obs, "tunnel-rtt", { tunnelId: t1 })?.observed).toBe("hold");
    expect(find(obs, "tunnel-drop-rate", { tunnelId: t1 })?.observed).toBe("ok");
  });

  it("the rule's severity applies to states without thresholds", () => {
    const obs = evaluate({
      rules: {
        "tunnel-connection": {
          enabled: true,
          warningThreshold: null,
          criticalThreshold: null,
          thresholdUnit: "",
          severity: "info",
          immediateEmail: false,
          resolvedAlert: true,
          sendWebHook: false,
        },
      },
    });
    expect(find(obs, "tunnel-connection", { tunnelId: t3 })?.observed).toBe("info");
  });

  it("each observation's key is notificationDedupKey of its condition, made when read; without openOf nothing is open", () => {
    const obs = evaluate();
    // 3 tunnels × 3, 1 link × 2, 2 interfaces × 2, 2 neighbors, 2 health figures.
    expect(obs).toHaveLength(19);
    for (const o of obs) {
      expect(o.condition.targets.deviceId).toBe(deviceId);
      expect(o.key).toBe(notificationDedupKey({ eventType: o.condition.eventType, targets: { ...o.condition.targets } }));
    }
    expect(new Set(obs.map((o) => o.key)).size).toBe(obs.length);
    // Hysteresis (rule 85/95 %, a band of 10 % below the warning): 90 % is a warning either way; 80 % holds an open
    // condition, which only openOf can tell; without openOf (a device with nothing open) 80 % is fine.
    const memory = (open: ((key: string) => "critical" | "ok") | undefined, percent: number) =>
      evaluateStatus({
        context,
        rules: completeRules(undefined),
        tunnels: [],
        status: {
          interfaces: [],
          bgp: null,
          health: { uptimeSeconds: 5, cpuPercent: 1, memoryPercent: percent, diskPercent: 10, temperatureC: null },
        },
        ...(open ? { openOf: open } : {}),
        confirmReports: 3,
      }).find((o) => o.condition.eventType === "device-memory-usage")!;
    const key = notificationDedupKey({ eventType: "device-memory-usage", targets: { deviceId } });
    const asked: string[] = [];
    const openCritical = (k: string) => {
      asked.push(k);
      return k === key ? ("critical" as const) : ("ok" as const);
    };
    expect(memory(undefined, 90).observed).toBe("warning");
    expect(memory(() => "ok", 90).observed).toBe("warning");
    expect(memory(openCritical, 80).observed).toBe("hold");
    // Asked once for each health figure: memory and disk.
    expect(asked).toEqual([key, notificationDedupKey({ eventType: "hard-drive-usage", targets: { deviceId } })]);
    expect(memory(undefined, 80).observed).toBe("ok");
    expect(memory(() => "ok", 80).observed).toBe("ok");
    expect(memory(openCritical, 80).key).toBe(key);
  });
});
