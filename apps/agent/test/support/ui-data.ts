/** A UiDataSource with fixed state and real diagnostics through a runner. */
import type { InterfaceState } from "@tern/protocol";
import type { Runner } from "../../src/runner.ts";
import { runPing, runTraceroute, type UiDataSource } from "../../src/ui/index.ts";

export function sampleUiData(runner: Runner): UiDataSource & { pings: string[] } {
  const pings: string[] = [];
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
  return {
    pings,
    connection: () => ({
      connected: true,
      server: "wss://tern.example.net/api/devices/ws",
      since: "2026-11-21T10:00:00.000Z",
      appliedHash: "ab12cd34ef56ab12cd34ef56",
      lastError: null,
    }),
    interfaces: async () => [iface],
    tunnels: () => [
      { id: "t-301", name: "branch-a ↔ hq", up: true, loss: 1.667, rtt: 23.456, srttMs: 22.1, jitter: 3.21, samples: 60 },
    ],
    bgp: async () => ({
      running: true,
      routerId: "10.100.0.2",
      localASN: 65001,
      neighbors: [
        { ip: "10.100.2.2", remoteASN: 65002, state: "Established", uptimeSeconds: 42, prefixesReceived: 3, prefixesSent: 2 },
      ],
    }),
    vrrp: () => [{ groupId: "lan-vip", state: "MASTER", since: "2026-11-21T10:00:05.000Z" }],
    recentErrors: () => [
      { at: "2026-11-21T10:01:00.000Z", message: "ikev2: peer 10.100.9.2 not answering <script>alert(1)</script>" },
    ],
    ping: (target) => {
      pings.push(target);
      return runPing(runner, target, 2);
    },
    traceroute: (target) => runTraceroute(runner, target),
  };
}
