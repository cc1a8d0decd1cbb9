/**
 * Checks `PUT /devices/{id}` runs beyond the device's own validation
 * (`validateDevice`) and the LAN overlap across the organization
 * (`checkLanOverlap`): what the device's tunnels and VRRP groups need from it.
 * Pure functions over already loaded data.
 */
import type { DeviceInterface } from "@tern/protocol";
import type { CompileVrrpGroup } from "../../compile/index.ts";
import { invalid, type Problem, type VrrpMemberDevice, validateVrrpGroup } from "../../validate/index.ts";

/** One end of a tunnel on the device being changed. */
export interface TunnelEndUse {
  num: number;
  interfaceId: string;
  /** The other end: a device name or a peer name. */
  other: string;
}

/** An interface that carries a tunnel must stay an assigned WAN interface (delete the tunnel first). */
export function checkTunnelInterfaces(
  interfaces: readonly DeviceInterface[],
  ends: readonly TunnelEndUse[],
  pathOf: (devId: string) => string,
): Problem[] {
  const problems: Problem[] = [];
  for (const end of ends) {
    const iface = interfaces.find((i) => i.id === end.interfaceId);
    if (!iface || (iface.isAssigned && iface.type === "WAN")) continue;
    problems.push(
      invalid(
        pathOf(iface.devId),
        `interface ${iface.name} carries tunnel ${end.num} to ${end.other}: it must stay an assigned WAN interface (delete the tunnel first)`,
      ),
    );
  }
  return problems;
}

export interface VrrpCheckInput {
  deviceId: string;
  /** The device as stored and as it would be stored. */
  before: VrrpMemberDevice;
  after: VrrpMemberDevice;
  /** The groups the device is a member of, with all their members. */
  groups: readonly CompileVrrpGroup[];
  /** Every member device of those groups as stored (this one included). */
  members: readonly VrrpMemberDevice[];
  /** Every group of the organization (for the virtual router id check). */
  allGroups: readonly { id: string; name: string; virtualRouterId: number }[];
  /** Where in the request body VRRP problems point. */
  path: string;
}

/**
 * The problems the change would create in the device's VRRP groups (virtual
 * IP outside the new LAN subnet, a member's DHCP range now covering it …).
 * Problems the groups already had without this change are not blamed on it.
 */
export function checkVrrpMembership(input: VrrpCheckInput): Problem[] {
  const problems: Problem[] = [];
  const others = input.members.filter((m) => m.id !== input.deviceId);
  const withDevice = (device: VrrpMemberDevice) => [...others, device];
  for (const group of input.groups) {
    const check = (devices: VrrpMemberDevice[]) =>
      validateVrrpGroup({
        group,
        groupId: group.id,
        devices,
        otherGroups: input.allGroups,
      }).map((p) => p.message);
    const existing = new Set(check(withDevice(input.before)));
    for (const message of check(withDevice(input.after)))
      if (!existing.has(message)) problems.push(invalid(input.path, `VRRP group ${group.name}: ${message}`));
  }
  return problems;
}
