/** Which addresses a device reaches directly: its static subnets and, over tunnels, the org's tunnel range. */
import { type Cidr, parseCidr } from "@tern/protocol";
import type { DeviceValidationContext, DeviceValidationInput } from "./device-input.ts";
import { type InterfaceLike, inside, staticSubnet } from "./net.ts";

export interface Connected {
  /** The interface whose static subnet holds `ip`, or "tunnel" for the tunnel range, or null. */
  via(ip: string): InterfaceLike | "tunnel" | null;
  /** True when some assigned interface is a DHCP client: its subnet is unknown, so "not connected" cannot be proven. */
  hasUnknownSubnets: boolean;
}

export function connectedOf(device: DeviceValidationInput, context: DeviceValidationContext): Connected {
  const nets: { iface: InterfaceLike; subnet: Cidr }[] = [];
  for (const iface of device.interfaces) {
    const subnet = iface.isAssigned ? staticSubnet(iface) : null;
    if (subnet) nets.push({ iface, subnet });
  }
  const range = context.tunnelRange ? parseCidr(context.tunnelRange) : null;
  return {
    via: (ip) => nets.find((n) => inside(n.subnet, ip))?.iface ?? (range && inside(range, ip) ? "tunnel" : null),
    hasUnknownSubnets: device.interfaces.some((i) => i.isAssigned && i.dhcp),
  };
}
