/** Address helpers for the validators, on top of the protocol's IPv4 arithmetic. */
import { type Cidr, cidrContains, type DeviceInterface, formatNetwork, parseCidr, parseIPv4 } from "@tern/protocol";
import { interfaceAddress } from "../compile/device-networks.ts";

/** The interface fields validation reads; both stored interfaces and merged PUT bodies fit. */
export type InterfaceLike = Pick<
  DeviceInterface,
  "devId" | "name" | "type" | "isAssigned" | "dhcp" | "IPv4" | "IPv4Mask" | "gateway"
> &
  Partial<Pick<DeviceInterface, "pathlabels">>;

/** The static subnet of an interface (a DHCP client's reported address is not configuration). */
export function staticSubnet(iface: InterfaceLike): Cidr | null {
  return iface.dhcp ? null : interfaceAddress(iface);
}

/** True when `ip` (text) lies inside `net`. Unparsable text is never inside. */
export function inside(net: Cidr, ip: string): boolean {
  const n = parseIPv4(ip);
  return n !== null && cidrContains(net, n);
}

/** True when the address is the network or broadcast address of a subnet that has both (prefix ≤ 30). */
export function isNetworkOrBroadcast(net: Cidr, ip: string): boolean {
  const n = parseIPv4(ip);
  return net.prefix <= 30 && n !== null && (n === net.network || n === net.broadcast);
}

export const show = (net: Cidr) => formatNetwork(net);

export function cidr(text: string): Cidr | null {
  return parseCidr(text);
}

/** Where an interface is referred to by devId: the interface, or why it does not qualify. */
export function lookupLan<T extends InterfaceLike>(
  interfaces: readonly T[],
  devId: string,
): { iface: T; subnet: Cidr } | { reason: string } {
  const iface = interfaces.find((i) => i.devId === devId);
  if (!iface) return { reason: `no interface has devId ${devId}` };
  if (!iface.isAssigned || iface.type !== "LAN")
    return { reason: `interface ${iface.name} (${devId}) is not an assigned LAN interface` };
  const subnet = staticSubnet(iface);
  if (!subnet) return { reason: `LAN interface ${iface.name} has no static address` };
  return { iface, subnet };
}
