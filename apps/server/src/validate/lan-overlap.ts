/**
 * LAN overlap across an organization: a device's LAN subnets (and the prefixes
 * its LAN NAT publishes) against every other device's. `PUT /devices/{id}`
 * refuses these with LAN_OVERLAPPING unless `allowOverlapping=true`.
 */
import { type Cidr, cidrsOverlap, type Firewall, parseCidr, type VrrpMember } from "@tern/protocol";
import { publishedSubnets } from "../compile/device-networks.ts";
import { type InterfaceLike, show, staticSubnet } from "./net.ts";
import { type Problem, problem } from "./problem.ts";

export interface OverlapDevice {
  id: string;
  name: string;
  interfaces: readonly InterfaceLike[];
  firewall: Firewall;
}

/** Members of the same VRRP group share one LAN segment on purpose: their equal subnets are not an overlap. */
export type OverlapVrrpGroup = { devices: readonly Pick<VrrpMember, "device" | "interface">[] };

export function checkLanOverlap(
  device: OverlapDevice,
  others: readonly OverlapDevice[],
  vrrpGroups: readonly OverlapVrrpGroup[] = [],
): Problem[] {
  const problems: Problem[] = [];
  const sameSegment = (devIdA: string, otherDevice: string, devIdB: string) =>
    vrrpGroups.some(
      (g) =>
        g.devices.some((m) => m.device === device.id && m.interface === devIdA) &&
        g.devices.some((m) => m.device === otherDevice && m.interface === devIdB),
    );
  const peers = others.filter((o) => o.id !== device.id);

  device.interfaces.forEach((iface, i) => {
    if (!iface.isAssigned || iface.type !== "LAN") return;
    const subnet = staticSubnet(iface);
    if (!subnet) return;
    for (const other of peers)
      for (const theirs of lanSubnetsOf(other)) {
        if (!cidrsOverlap(subnet, theirs.subnet)) continue;
        const equal = subnet.network === theirs.subnet.network && subnet.prefix === theirs.subnet.prefix;
        if (equal && sameSegment(iface.devId, other.id, theirs.iface.devId)) continue;
        problems.push(
          problem(
            "LAN_OVERLAPPING",
            `interfaces.${i}.IPv4`,
            `LAN subnet ${show(subnet)} of ${iface.name} overlaps ${show(theirs.subnet)} on interface ${theirs.iface.name} of device ${other.name}`,
          ),
        );
      }
  });

  // A translated prefix is what the other sites route to: it must be unique in the overlay too.
  device.firewall.rules.forEach((rule, i) => {
    if (rule.direction !== "lanNat" || !rule.enabled) return;
    const translated = parseCidr(rule.translated);
    if (!translated) return;
    for (const other of peers)
      for (const net of publishedOf(other))
        if (cidrsOverlap(translated, net))
          problems.push(
            problem(
              "LAN_OVERLAPPING",
              `firewall.rules.${i}.translated`,
              `translated prefix ${rule.translated} overlaps ${show(net)} published by device ${other.name}`,
            ),
          );
  });
  return problems;
}

function lanSubnetsOf(device: OverlapDevice): { iface: InterfaceLike; subnet: Cidr }[] {
  return device.interfaces.flatMap((iface) => {
    const subnet = iface.isAssigned && iface.type === "LAN" ? staticSubnet(iface) : null;
    return subnet ? [{ iface, subnet }] : [];
  });
}

function publishedOf(device: OverlapDevice): Cidr[] {
  return publishedSubnets(device).flatMap((s) => parseCidr(s) ?? []);
}
