/**
 * Checks for changing an organization's tunnel range: the new range must be a
 * valid /24-or-larger network, hold every tunnel number in use, stay clear of
 * every device subnet and LAN NAT prefix, and no device may point a static
 * route or BGP neighbour at a loopback of the current range (those addresses
 * would not follow the re-addressing).
 */
import { type Bgp, cidrsOverlap, formatNetwork, parseCidr, type StaticRoute, TunnelRange, tunnelCapacity } from "@tern/protocol";
import type { OverlapDevice } from "./lan-overlap.ts";
import { inside, show, staticSubnet } from "./net.ts";
import { invalid, type Problem, problem } from "./problem.ts";

export interface TunnelRangeDevice extends OverlapDevice {
  staticRoutes?: readonly StaticRoute[];
  bgp?: Pick<Bgp, "enable" | "neighbors">;
}

export interface TunnelRangeChange {
  newRange: string;
  /** The range in force now; enables the check of references to current loopbacks. */
  currentRange?: string;
  /** Every device of the organization. */
  devices: readonly TunnelRangeDevice[];
  /** The numbers of the organization's tunnels. */
  tunnelNums: readonly number[];
}

const PATH = "tunnelRange";

export function checkTunnelRangeChange(change: TunnelRangeChange): Problem[] {
  const parsed = TunnelRange.safeParse(change.newRange);
  if (!parsed.success) return [invalid(PATH, parsed.error.issues[0]?.message ?? "tunnelRange is invalid")];
  const range = parseCidr(change.newRange);
  if (!range) return [invalid(PATH, "tunnelRange is invalid")];
  const current = change.currentRange ? parseCidr(change.currentRange) : null;
  if (current && current.network === range.network && current.prefix === range.prefix) return [];
  const problems: Problem[] = [];
  const name = formatNetwork(range);

  const capacity = tunnelCapacity(range);
  const highest = Math.max(-1, ...change.tunnelNums);
  if (highest >= capacity)
    problems.push(
      problem(
        "TUNNEL_RANGE_EXHAUSTED",
        PATH,
        `${name} holds ${capacity} tunnels (numbers 0-${capacity - 1}); the organization has ${change.tunnelNums.length} tunnels and uses number ${highest}`,
      ),
    );

  for (const device of change.devices) {
    for (const iface of device.interfaces) {
      const subnet = iface.isAssigned ? staticSubnet(iface) : null;
      if (!subnet || !cidrsOverlap(range, subnet)) continue;
      const code = iface.type === "LAN" ? "LAN_OVERLAPPING" : "VALIDATION_FAILED";
      problems.push(
        problem(code, PATH, `${name} overlaps ${show(subnet)} on ${iface.type} interface ${iface.name} of device ${device.name}`),
      );
    }
    for (const rule of device.firewall.rules) {
      if (rule.direction !== "lanNat" || !rule.enabled) continue;
      const translated = parseCidr(rule.translated);
      if (translated && cidrsOverlap(range, translated))
        problems.push(
          problem("LAN_OVERLAPPING", PATH, `${name} overlaps the LAN NAT prefix ${rule.translated} of device ${device.name}`),
        );
    }
    if (!current) continue;
    for (const route of device.staticRoutes ?? [])
      if (inside(current, route.gateway))
        problems.push(
          invalid(
            PATH,
            `device ${device.name} routes ${route.destination} via tunnel loopback ${route.gateway} of the current range; change that route first`,
          ),
        );
    if (device.bgp?.enable)
      for (const n of device.bgp.neighbors)
        if (inside(current, n.ip))
          problems.push(
            invalid(
              PATH,
              `device ${device.name} has BGP neighbor ${n.ip}, a tunnel loopback of the current range; change that neighbor first`,
            ),
          );
  }
  return problems;
}
