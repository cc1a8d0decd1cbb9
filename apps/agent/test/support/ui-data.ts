/**
 * The troubleshooting page's data source as the agent builds it
 * (agentUiData over an AgentView), over a fixed snapshot; ping and
 * traceroute are the agent's real protocol requests through `runner`.
 */
import { emptyDeviceConfig, type InterfaceState, type RequestMethod, type Status } from "@tern/protocol";
import { RequestHandler } from "../../src/control/requests.ts";
import type { AgentSnapshot, AgentView } from "../../src/daemon/snapshot.ts";
import { agentUiData } from "../../src/daemon/ui-data.ts";
import type { Runner } from "../../src/runner.ts";
import type { UiDataSource } from "../../src/ui/index.ts";
import { driverContext } from "./context.ts";

const iface: InterfaceState = {
  devId: "mac:02:00:00:00:0a:01",
  name: "wan0",
  operState: "up",
  IPv4: "10.100.1.2",
  IPv4Mask: 24,
  gateway: "10.100.1.1",
  mac: "02:00:00:00:0a:01",
  mtu: 1500,
  rxBytes: 1234,
  txBytes: 5678,
  publicIp: "",
  publicPort: null,
  lte: null,
};

const status: Status = {
  type: "status",
  at: "2026-11-21T10:01:00.000Z",
  appliedHash: "ab12cd34ef56ab12cd34ef56",
  applying: false,
  interfaces: [iface],
  tunnels: [{ id: "t-301", up: true, loss: 1.667, rtt: 23.456, jitter: 3.21, samples: 60 }],
  bgp: {
    running: true,
    routerId: "10.100.0.2",
    localASN: 65001,
    neighbors: [
      { ip: "10.100.2.2", remoteASN: 65002, state: "Established", uptimeSeconds: 42, prefixesReceived: 3, prefixesSent: 2 },
    ],
  },
  vrrp: [{ groupId: "lan-vip", state: "MASTER", since: "2026-11-21T10:00:05.000Z" }],
  health: null,
};

export function sampleSnapshot(): AgentSnapshot {
  return {
    agentVersion: "0.1.0",
    pid: process.pid,
    mode: "standalone",
    stateDir: "/var/lib/tern-agent",
    runDir: "/run/tern-agent",
    machineId: "test-machine-0001",
    hostname: "edge-a",
    deviceId: "00000000-0000-4000-8000-000000000001",
    startedAt: "2026-11-21T09:59:00.000Z",
    updatedAt: "2026-11-21T10:01:00.000Z",
    connection: {
      state: "connected",
      since: "2026-11-21T10:00:00.000Z",
      server: "https://tern.example.net",
      url: "wss://tern.example.net/api/connect/ws",
      lastError: null,
      reconnects: 0,
      serverVersion: "0.1.0",
      statusIntervalMs: 5000,
    },
    appliedHash: status.appliedHash,
    applying: false,
    interrupted: null,
    lastApply: null,
    drivers: {},
    driverDetails: {},
    status,
    tunnelDetails: [{ id: "t-301", name: "branch-a ↔ hq", srttMs: 22.1, target: "10.100.0.5" }],
    recentErrors: [
      {
        at: "2026-11-21T10:01:00.000Z",
        source: "ikev2",
        message: "peer 10.100.9.2 not answering <script>alert(1)</script>",
        count: 1,
      },
    ],
    metrics: null,
    ui: null,
    controlServer: null,
  };
}

/** The page's data source over a fixed snapshot; `pings` lists the targets that reached the runner. */
export function sampleUiData(runner: Runner): UiDataSource & { pings: string[] } {
  const pings: string[] = [];
  const requests = new RequestHandler({
    drivers: [],
    context: driverContext(runner, "/nonexistent"),
    current: () => emptyDeviceConfig("none"),
    tunnels: { report: () => status.tunnels },
  });
  const view: AgentView = {
    snapshot: sampleSnapshot,
    request: async (method: RequestMethod, params: unknown) => {
      const result = await requests.handle(method, params);
      if (method === "ping") pings.push(String((params as { target: string }).target));
      return result;
    },
    refresh: async () => status,
  };
  return Object.assign(agentUiData(view), { pings });
}
