/** Static route checks: no duplicates for the kernel, an existing interface, a gateway the device can reach. */

import { connectedOf } from "./connected.ts";
import type { DeviceValidationContext, DeviceValidationInput } from "./device-input.ts";
import { inside, show, staticSubnet } from "./net.ts";
import { invalid, type Problem } from "./problem.ts";

export function checkStaticRoutes(device: DeviceValidationInput, context: DeviceValidationContext): Problem[] {
  const problems: Problem[] = [];
  const connected = connectedOf(device, context);
  const ownAddresses = new Set(device.interfaces.filter((i) => i.isAssigned && i.IPv4).map((i) => i.IPv4));
  // The kernel keys a route by destination and metric (in one table): a second one is refused with "File exists".
  const keys = new Map<string, number>();
  device.staticRoutes.forEach((route, i) => {
    const at = (field: string) => `staticRoutes.${i}.${field}`;
    const key = `${route.destination}|${route.metric}`;
    const first = keys.get(key);
    if (first !== undefined)
      problems.push(
        invalid(
          `staticRoutes.${i}`,
          `duplicates route ${first}: same destination ${route.destination} and metric ${route.metric}`,
        ),
      );
    else keys.set(key, i);

    if (ownAddresses.has(route.gateway)) {
      problems.push(invalid(at("gateway"), `gateway ${route.gateway} is one of the device's own addresses`));
      return;
    }
    if (route.ifname) {
      const iface = device.interfaces.find((x) => x.name === route.ifname);
      if (!iface?.isAssigned) {
        problems.push(invalid(at("ifname"), `no assigned interface is named ${route.ifname}`));
        return;
      }
      const subnet = staticSubnet(iface);
      // A DHCP client's subnet is only known at run time.
      if (subnet && !inside(subnet, route.gateway))
        problems.push(invalid(at("gateway"), `gateway ${route.gateway} is not on ${route.ifname}'s subnet ${show(subnet)}`));
      return;
    }
    if (connected.via(route.gateway) === null && !connected.hasUnknownSubnets)
      problems.push(invalid(at("gateway"), `gateway ${route.gateway} is not on any connected subnet of the device`));
  });
  return problems;
}
