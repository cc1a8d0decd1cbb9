/** The status-sized message used as echo payload: a real `status` with 4 tunnel samples, as a device sends it. */

import { interfaceStates } from "../simulator/identity.ts";
import { buildStatus, tunnelReports } from "../simulator/status.ts";

export function statusMessage(tunnels = 4) {
  const ids = Array.from({ length: tunnels }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`);
  return buildStatus({
    appliedHash: "ab".repeat(32),
    applying: false,
    tunnels: tunnelReports(
      ids,
      { fleet: { loss: 0.5, rtt: 23.41, jitter: 1.2 }, fleetSince: 0, device: undefined, deviceSince: 0, perTunnel: undefined },
      0,
    ),
    interfaces: interfaceStates(42, 3_600_000, undefined),
    bgp: null,
    vrrp: [],
    uptimeSeconds: 3600,
  });
}

export function statusPayload(tunnels = 4): string {
  return JSON.stringify(statusMessage(tunnels));
}
