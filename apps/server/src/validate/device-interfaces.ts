/** Interface checks: unique names and devIds, complete static addresses, gateways on-link, no overlapping subnets. */
import { cidrsOverlap, parseCidr } from "@tern/protocol";
import type { DeviceValidationContext, DeviceValidationInput } from "./device-input.ts";
import { inside, isNetworkOrBroadcast, show, staticSubnet } from "./net.ts";
import { invalid, type Problem } from "./problem.ts";

export function checkInterfaces(device: DeviceValidationInput, context: DeviceValidationContext): Problem[] {
  const problems: Problem[] = [];
  const seenDevId = new Map<string, number>();
  const seenName = new Map<string, number>();
  const range = context.tunnelRange ? parseCidr(context.tunnelRange) : null;
  const labels = context.pathLabelIds ? new Set(context.pathLabelIds) : null;

  device.interfaces.forEach((iface, i) => {
    const at = (field: string) => `interfaces.${i}.${field}`;
    const dupId = seenDevId.get(iface.devId);
    if (dupId !== undefined) problems.push(invalid(at("devId"), `devId ${iface.devId} is used by interface ${dupId} too`));
    else seenDevId.set(iface.devId, i);
    const dupName = seenName.get(iface.name);
    if (dupName !== undefined) problems.push(invalid(at("name"), `name ${iface.name} is used by interface ${dupName} too`));
    else seenName.set(iface.name, i);

    if (labels)
      (iface.pathlabels ?? []).forEach((id, k) => {
        if (!labels.has(id))
          problems.push(invalid(`${at("pathlabels")}.${k}`, `path label ${id} does not exist in the organization`));
      });

    if (!iface.isAssigned || iface.dhcp) return;
    if (iface.IPv4 && iface.IPv4Mask === null) {
      problems.push(invalid(at("IPv4Mask"), `address ${iface.IPv4} of ${iface.name} needs a prefix length`));
      return;
    }
    const subnet = staticSubnet(iface);
    if (!subnet) {
      if (iface.type !== "NONE")
        problems.push(invalid(at("IPv4"), `${iface.type} interface ${iface.name} needs a static address or dhcp: true`));
      return;
    }
    if (isNetworkOrBroadcast(subnet, iface.IPv4))
      problems.push(invalid(at("IPv4"), `${iface.IPv4} is the network or broadcast address of ${show(subnet)}`));
    if (iface.gateway) {
      if (iface.gateway === iface.IPv4)
        problems.push(invalid(at("gateway"), `gateway ${iface.gateway} is the interface's own address`));
      else if (!inside(subnet, iface.gateway))
        problems.push(invalid(at("gateway"), `gateway ${iface.gateway} is outside the subnet ${show(subnet)} of ${iface.name}`));
    }
    if (range && cidrsOverlap(range, subnet))
      problems.push(
        invalid(
          at("IPv4"),
          `subnet ${show(subnet)} of ${iface.name} overlaps the organization's tunnel range ${context.tunnelRange}`,
        ),
      );
  });

  // Two connected subnets that overlap make the kernel's choice of interface arbitrary.
  const statics = device.interfaces.map((iface, i) => ({ iface, i, subnet: iface.isAssigned ? staticSubnet(iface) : null }));
  for (const a of statics)
    for (const b of statics)
      if (a.subnet && b.subnet && a.i < b.i && cidrsOverlap(a.subnet, b.subnet))
        problems.push(
          invalid(
            `interfaces.${b.i}.IPv4`,
            `subnet ${show(b.subnet)} of ${b.iface.name} overlaps ${show(a.subnet)} of ${a.iface.name}`,
          ),
        );
  return problems;
}
