/**
 * VRRP group checks for `POST/PUT /vrrp`: every member exists and names an
 * assigned LAN interface with a static address; the virtual IP is a usable
 * host address inside every member's subnet, is nobody's own address and is not
 * handed out by a member's DHCP server; members share one L2 subnet; tracked
 * interfaces exist; the virtual router id is unique in the organization.
 */
import { type DhcpServer, parseIPv4, type VrrpGroupCreate } from "@tern/protocol";
import { type InterfaceLike, inside, isNetworkOrBroadcast, lookupLan, show } from "./net.ts";
import { invalid, type Problem, problem } from "./problem.ts";

export interface VrrpMemberDevice {
  id: string;
  name: string;
  interfaces: readonly InterfaceLike[];
  dhcp?: readonly DhcpServer[];
}

export interface VrrpGroupCheck {
  group: Pick<VrrpGroupCreate, "virtualRouterId" | "virtualIp" | "devices">;
  /** The stored id when updating (so the group does not conflict with itself). */
  groupId?: string;
  /** The member devices, as stored. */
  devices: readonly VrrpMemberDevice[];
  /** The organization's other VRRP groups. */
  otherGroups: readonly { id: string; name: string; virtualRouterId: number }[];
}

export function validateVrrpGroup({ group, groupId, devices, otherGroups }: VrrpGroupCheck): Problem[] {
  const problems: Problem[] = [];
  const vip = group.virtualIp;
  const vipNum = parseIPv4(vip);
  const clash = otherGroups.find((g) => g.id !== groupId && g.virtualRouterId === group.virtualRouterId);
  if (clash)
    problems.push(
      problem("CONFLICT", "virtualRouterId", `virtual router id ${group.virtualRouterId} is used by VRRP group ${clash.name}`),
    );

  let segment: { text: string; who: string } | null = null;
  const memberAddresses = new Map<string, string>();
  const seen = new Set<string>();
  group.devices.forEach((member, i) => {
    const at = (field: string) => `devices.${i}.${field}`;
    if (seen.has(member.device)) problems.push(invalid(at("device"), "a device can be in a group once"));
    seen.add(member.device);
    const device = devices.find((d) => d.id === member.device);
    if (!device) {
      problems.push(invalid(at("device"), `device ${member.device} does not exist in the organization`));
      return;
    }
    const lan = lookupLan(device.interfaces, member.interface);
    if ("reason" in lan) {
      problems.push(
        invalid(
          at("interface"),
          `device ${device.name}: VRRP needs an assigned LAN interface with a static address: ${lan.reason}`,
        ),
      );
      return;
    }
    const { iface, subnet } = lan;
    const who = `${iface.name} of ${device.name}`;

    if (!inside(subnet, vip))
      problems.push(invalid("virtualIp", `virtual IP ${vip} is outside the subnet ${show(subnet)} of ${who}`));
    else if (isNetworkOrBroadcast(subnet, vip))
      problems.push(invalid("virtualIp", `virtual IP ${vip} is the network or broadcast address of ${show(subnet)}`));
    if (iface.IPv4 === vip) problems.push(invalid("virtualIp", `virtual IP ${vip} is the own address of ${who}`));

    // Members must share one L2 segment: the same subnet, each with its own address.
    const text = show(subnet);
    if (segment === null) segment = { text, who };
    else if (segment.text !== text)
      problems.push(
        invalid(
          at("interface"),
          `${who} is on ${text}, not on ${segment.text} like ${segment.who}: members must share one subnet`,
        ),
      );
    const sameAddress = memberAddresses.get(iface.IPv4);
    if (sameAddress) problems.push(invalid(at("interface"), `${who} has the address ${iface.IPv4} of ${sameAddress} too`));
    else memberAddresses.set(iface.IPv4, who);

    for (const server of device.dhcp ?? []) {
      if (server.interface !== member.interface || vipNum === null) continue;
      const [start, end] = [parseIPv4(server.rangeStart) ?? 0, parseIPv4(server.rangeEnd) ?? -1];
      if (vipNum >= start && vipNum <= end)
        problems.push(
          invalid("virtualIp", `virtual IP ${vip} is inside the DHCP range ${server.rangeStart}-${server.rangeEnd} of ${who}`),
        );
      if (server.macAssign.some((r) => r.ipv4 === vip))
        problems.push(invalid("virtualIp", `virtual IP ${vip} is reserved for a DHCP client on ${who}`));
    }

    for (const field of ["trackInterfacesOptional", "trackInterfacesMandatory"] as const)
      member[field].forEach((devId, k) => {
        const tracked = device.interfaces.find((x) => x.devId === devId);
        if (!tracked?.isAssigned)
          problems.push(invalid(`${at(field)}.${k}`, `device ${device.name} has no assigned interface ${devId} to track`));
      });
  });
  return problems;
}
