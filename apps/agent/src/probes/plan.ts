/**
 * What to probe for a DeviceConfig (pure):
 * - device tunnels: ICMP echo from the local tunnel loopback to each probe
 *   target (the remote tunnel loopback): the far end's kernel answers, so the
 *   probe measures the data path through the tunnel, and a far agent that is
 *   stopped or restarting changes nothing while IPsec still carries traffic;
 * - peer tunnels (no agent at the far end): ICMP echo to the peer's
 *   health-check targets, from a local address inside the tunnel's local
 *   subnets when the device has one (so the traffic selectors match);
 * - WAN interfaces that carry a path label: ICMP echo to their gateway, bound
 *   to the interface, so the policy driver can judge DIA links too.
 */
import type { DeviceConfig } from "@tern/protocol";
import { tunnelKey, wanKey } from "./types.ts";

export interface PlannedTarget {
  link: string;
  target: string;
  method: "udp" | "icmp";
  /** UDP: local loopback to send from. ICMP: source address (`fping -S`). */
  source?: string;
  /** ICMP: device to bind to (`fping -I`). */
  iface?: string;
}

export interface ProbePlan {
  targets: PlannedTarget[];
  /** Local loopbacks the UDP responder answers on (for agents of earlier versions that still probe over UDP). */
  responderAddresses: string[];
  intervalMs: number;
  timeoutMs: number;
  windowSize: number;
  downAfterMs: number;
}

const toInt = (ip: string) => ip.split(".").reduce((a, o) => ((a << 8) | Number(o)) >>> 0, 0);
function inNetwork(ip: string, cidr: string): boolean {
  const [net, len] = cidr.split("/") as [string, string];
  const mask = Number(len) === 0 ? 0 : (~0 << (32 - Number(len))) >>> 0;
  return (toInt(ip) & mask) >>> 0 === (toInt(net) & mask) >>> 0;
}

/**
 * A probe counts as lost when its answer takes longer than this: one interval,
 * but at least 1 s (so a slow path is not mistaken for a lossy one) and never
 * longer than the down time.
 */
export function probeTimeoutMs(intervalMs: number, downAfterMs: number): number {
  return Math.min(Math.max(intervalMs, 1000), downAfterMs);
}

export function probePlan(config: DeviceConfig): ProbePlan {
  const { probeIntervalMs, windowSize, downAfterMs } = config.monitoring;
  const targets: PlannedTarget[] = [];
  const localAddresses = config.interfaces.flatMap((i) => (i.address ? [i.address.split("/")[0]!] : []));
  for (const t of config.tunnels) {
    const link = tunnelKey(t.id);
    if (t.kind === "device") {
      for (const target of t.probeTargets) targets.push({ link, target, method: "icmp", source: t.localLoopback });
    } else {
      const source = localAddresses.find((a) => t.localSubnets.some((s) => inNetwork(a, s)));
      for (const target of t.probeTargets) targets.push({ link, target, method: "icmp", ...(source ? { source } : {}) });
    }
  }
  for (const i of config.interfaces)
    if (i.type === "WAN" && i.pathLabels.length > 0 && i.gateway)
      targets.push({ link: wanKey(i.name), target: i.gateway, method: "icmp", iface: i.name });
  return {
    targets,
    responderAddresses: [...new Set(config.tunnels.filter((t) => t.kind === "device").map((t) => t.localLoopback))],
    intervalMs: probeIntervalMs,
    timeoutMs: probeTimeoutMs(probeIntervalMs, downAfterMs),
    windowSize,
    downAfterMs,
  };
}
