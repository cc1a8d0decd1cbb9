/** BGP checks: ASN and multiHop present when enabled (6.3.1), unique neighbours, single-hop neighbours on a connected subnet. */

import { connectedOf } from "./connected.ts";
import type { DeviceValidationContext, DeviceValidationInput } from "./device-input.ts";
import { invalid, type Problem } from "./problem.ts";

export function checkBgp(device: DeviceValidationInput, context: DeviceValidationContext): Problem[] {
  const bgp = device.bgp;
  if (!bgp.enable) return [];
  const problems: Problem[] = [];
  if (bgp.localASN === null) problems.push(invalid("bgp.localASN", "localASN is required when BGP is enabled"));
  if (bgp.holdInterval < bgp.keepaliveInterval * 3)
    problems.push(invalid("bgp.holdInterval", "holdInterval must be at least 3 × keepaliveInterval"));
  const connected = connectedOf(device, context);
  const own = new Set(device.interfaces.filter((i) => i.isAssigned && i.IPv4).map((i) => i.IPv4));
  const seen = new Map<string, number>();
  bgp.neighbors.forEach((n, i) => {
    const at = (field: string) => `bgp.neighbors.${i}.${field}`;
    const first = seen.get(n.ip);
    if (first !== undefined) problems.push(invalid(at("ip"), `neighbor ${n.ip} is listed twice (also neighbor ${first})`));
    else seen.set(n.ip, i);
    if (own.has(n.ip)) problems.push(invalid(at("ip"), `neighbor ${n.ip} is one of the device's own addresses`));
    if (n.multiHop === undefined) {
      problems.push(invalid(at("multiHop"), "multiHop is required on every neighbor when BGP is enabled (6.3.1)"));
      return;
    }
    // With TTL 1 the session never leaves the wire: a neighbour further away never connects.
    if (n.multiHop === 1 && connected.via(n.ip) === null && !connected.hasUnknownSubnets)
      problems.push(
        invalid(
          at("multiHop"),
          `neighbor ${n.ip} is not on a connected subnet: set multiHop to the number of hops to it (2 or more)`,
        ),
      );
  });
  return problems;
}
