/**
 * Reading a device's interfaces as networks: lookups by devId and id, the
 * connected subnet of an interface, and the LAN subnets a device publishes to
 * the overlay (after LAN 1:1 NAT). Shared by the compiler and the validators.
 */
import {
  type Cidr,
  type DeviceInterface,
  type Firewall,
  formatNetwork,
  interfaceCidr,
  type LanNatRule,
  parseCidr,
} from "@tern/protocol";
import { compareCidr, sortedUnique } from "./order.ts";

/** The interface fields network reasoning needs; stored interfaces and merged PUT bodies both fit. */
export type NetInterface = Pick<DeviceInterface, "devId" | "isAssigned" | "type" | "IPv4" | "IPv4Mask">;

/** The interface's static (or last known) address with its prefix, or null. */
export function interfaceAddress(iface: Pick<DeviceInterface, "IPv4" | "IPv4Mask">): Cidr | null {
  const text = interfaceCidr(iface);
  return text === null ? null : parseCidr(text);
}

export function findByDevId<T extends Pick<DeviceInterface, "devId">>(interfaces: readonly T[], devId: string): T | undefined {
  return interfaces.find((i) => i.devId === devId);
}

export function findById<T extends Pick<DeviceInterface, "id">>(interfaces: readonly T[], id: string): T | undefined {
  return interfaces.find((i) => i.id === id);
}

/** Assigned LAN interfaces that have an address, with their connected subnet. */
export function lanSubnets<T extends NetInterface>(device: { interfaces: readonly T[] }): { iface: T; subnet: Cidr }[] {
  const out: { iface: T; subnet: Cidr }[] = [];
  for (const iface of device.interfaces) {
    if (!iface.isAssigned || iface.type !== "LAN") continue;
    const subnet = interfaceAddress(iface);
    if (subnet) out.push({ iface, subnet });
  }
  return out;
}

/** True when `inner` lies entirely inside `outer`. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return inner.prefix >= outer.prefix && inner.network >= outer.network && inner.broadcast <= outer.broadcast;
}

/** Enabled LAN NAT rules whose source lies inside the LAN subnet of the interface they name. */
export function natRulesOf(firewall: Firewall, iface: Pick<DeviceInterface, "devId">, subnet: Cidr): LanNatRule[] {
  return firewall.rules.filter((r): r is LanNatRule & { direction: "lanNat" } => {
    if (r.direction !== "lanNat" || !r.enabled || r.interface !== iface.devId) return false;
    const source = parseCidr(r.source);
    return source !== null && cidrWithin(source, subnet);
  });
}

/**
 * The LAN networks a device makes reachable across tunnels and BGP: each LAN
 * subnet, or, when enabled LAN NAT rules map (part of) it, the translated
 * prefixes of those rules instead. 1:1 NAT exists to hide a subnet that
 * overlaps another site's, so the original must not be published next to it.
 * Sorted by network, without duplicates.
 */
export function publishedSubnets(device: { interfaces: readonly NetInterface[]; firewall: Firewall }): string[] {
  const nets: string[] = [];
  for (const { iface, subnet } of lanSubnets(device)) {
    const nat = natRulesOf(device.firewall, iface, subnet);
    if (nat.length === 0) nets.push(formatNetwork(subnet));
    else nets.push(...nat.map((r) => r.translated));
  }
  return sortedUnique(nets, compareCidr);
}
