/** Building the `status` message a simulated device sends periodically. */
import type { DeviceConfig, InterfaceState, Status, TunnelReport } from "@tern/protocol";
import { resolveMetrics } from "./metrics.ts";
import type { TunnelMetricsInput } from "./types.ts";

/** The part of an applied BGP section a device keeps to answer `bgp-status`: [ip, remoteAsn] per neighbour. */
export interface SimBgp {
  asn: number;
  routerId: string;
  neighbors: [string, number][];
}

export function compactBgp(config: DeviceConfig): SimBgp | null {
  if (config.bgp === null) return null;
  return { asn: config.bgp.asn, routerId: config.bgp.routerId, neighbors: config.bgp.neighbors.map((n) => [n.ip, n.remoteAsn]) };
}

/** Where a tunnel's figures come from: its own override, else the device's, else the fleet's. */
export interface MetricsSources {
  fleet: TunnelMetricsInput;
  fleetSince: number;
  device: TunnelMetricsInput | undefined;
  deviceSince: number;
  perTunnel: Map<string, { input: TunnelMetricsInput; since: number }> | undefined;
}

/** Probes per window the simulated agent claims (its default monitoring window). */
const SAMPLES = 30;

export function tunnelReports(tunnelIds: readonly string[], sources: MetricsSources, now: number): TunnelReport[] {
  return tunnelIds.map((id) => {
    const own = sources.perTunnel?.get(id);
    const [input, since] = own
      ? [own.input, own.since]
      : sources.device !== undefined
        ? [sources.device, sources.deviceSince]
        : [sources.fleet, sources.fleetSince];
    const m = resolveMetrics(input, id, now - since);
    const base = { id, up: m.up, loss: round(m.loss), rtt: round(m.rtt), jitter: round(m.jitter), samples: SAMPLES };
    return m.counts ? { ...base, ...m.counts } : base;
  });
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}

export interface StatusInput {
  appliedHash: string | null;
  applying: boolean;
  tunnels: TunnelReport[];
  interfaces: InterfaceState[];
  bgp: Status["bgp"];
  vrrp: Status["vrrp"];
  uptimeSeconds: number;
}

export function buildStatus(input: StatusInput): Status {
  return {
    type: "status",
    at: new Date().toISOString(),
    appliedHash: input.appliedHash,
    applying: input.applying,
    tunnels: input.tunnels,
    interfaces: input.interfaces,
    bgp: input.bgp,
    vrrp: input.vrrp,
    health: { uptimeSeconds: input.uptimeSeconds, cpuPercent: 3, memoryPercent: 21, diskPercent: 40, temperatureC: null },
  };
}
