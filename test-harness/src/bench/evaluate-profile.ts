/**
 * Profiling aid for the rule engine's judgement of one status (issue 14),
 * not a bench case: `evaluateStatus` for the bench fleet's device (four
 * tunnels over two WAN links, three interfaces, health figures, nothing
 * wrong), timed in this process, for a device with nothing open and for one
 * with an open condition (then the engine reads every observation's key).
 * Every status of a connected device runs it.
 *
 *   npx tsx test-harness/src/bench/evaluate-profile.ts
 */
import { randomUUID } from "node:crypto";
import type { InterfaceState, Status, TunnelReport } from "@tern/protocol";
import type { ContextTunnel, DeviceContext } from "../../../apps/server/src/notify/device-context.ts";
import { evaluateStatus } from "../../../apps/server/src/notify/evaluate-status.ts";
import { completeRules } from "../../../apps/server/src/services/notifications/settings.ts";

const rounds = 5;
const perRound = 50_000;
const wan = [randomUUID(), randomUUID()];
const tunnels = new Map<string, ContextTunnel>();
for (let i = 0; i < 4; i++) {
  const id = randomUUID();
  tunnels.set(id, {
    id,
    num: i + 1,
    side: "a",
    localInterfaceId: wan[i % 2]!,
    farName: `edge-${i}`,
    farDeviceId: randomUUID(),
    thresholds: { rtt: null, dropRate: null },
  });
}
const context: DeviceContext = {
  deviceId: randomUUID(),
  orgId: randomUUID(),
  name: "edge-1",
  interfaces: [
    { id: wan[0]!, devId: "pci:3", name: "eth0", type: "WAN" },
    { id: wan[1]!, devId: "pci:5", name: "eth2", type: "WAN" },
    { id: randomUUID(), devId: "pci:4", name: "eth1", type: "LAN" },
  ],
  bgpNeighbors: [],
  tunnels,
  loadedAt: Date.now(),
};
const iface = (devId: string): InterfaceState => ({
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
});
const reports: (TunnelReport & { side: "a" | "b" })[] = [...tunnels.keys()].map((id) => ({
  id,
  side: "a",
  up: true,
  rtt: 12.3,
  jitter: 1.1,
  loss: 0,
  samples: 10,
  sent: 10,
}));
const status: Pick<Status, "interfaces" | "bgp" | "health"> = {
  interfaces: [iface("pci:3"), iface("pci:4"), iface("pci:5")],
  bgp: null,
  health: { uptimeSeconds: 100, cpuPercent: 5, memoryPercent: 40, diskPercent: 20, temperatureC: null },
};
const rules = completeRules(undefined);
/** As the rule engine calls it: without open conditions no `openOf` and no key read; with one, every key read. */
const judge = (open: boolean) => {
  const obs = evaluateStatus({
    context,
    rules,
    tunnels: reports,
    status,
    ...(open ? { openOf: () => "ok" as const } : {}),
    confirmReports: 2,
  });
  if (open) for (const o of obs) keyLength += o.key.length;
  return obs.length;
};
let keyLength = 0;

let observations = 0;
for (const open of [false, true]) {
  for (let i = 0; i < 20_000; i++) observations += judge(open); // warm-up
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < perRound; i++) observations += judge(open);
    const us = Number(process.hrtime.bigint() - t0) / perRound / 1000;
    console.log(`${open ? "a condition open" : "nothing open"}, round ${r + 1}: ${us.toFixed(2)} µs per status`);
  }
}
console.log(`${judge(false)} observations per status (${observations} in all, ${keyLength} characters of keys read)`);
