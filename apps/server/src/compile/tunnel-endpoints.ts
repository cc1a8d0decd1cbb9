/** Which address each end of a tunnel uses to reach the other. */
import { type DeviceInterface, type parseCidr, parseIPv4 } from "@tern/protocol";
import { interfaceAddress } from "./device-networks.ts";

type Endpoint = Pick<DeviceInterface, "IPv4" | "IPv4Mask" | "PublicIP">;

/** The public address the server saw for the interface, when it is a valid IPv4. */
function publicIp(iface: Endpoint): string | null {
  return iface.PublicIP && parseIPv4(iface.PublicIP) !== null ? iface.PublicIP : null;
}

/** True when the server saw the interface from a different address than its own: it sits behind NAT. */
export function isBehindNat(iface: Endpoint): boolean {
  const pub = publicIp(iface);
  return pub !== null && pub !== iface.IPv4;
}

/**
 * The address `local` dials to reach `remote`. Kept simple on purpose:
 * the remote interface's own address, except when it is behind NAT and the two
 * ends are not at the same site; then its public address (the NAT's outside).
 * "Same site" means the remote address is inside the local interface's subnet,
 * or both interfaces leave through the same public address (the same NAT),
 * where the private address is what works (no hairpin NAT needed).
 * Null when neither address is known yet (a DHCP interface not yet reported).
 */
export function remoteAddressFor(local: Endpoint, remote: Endpoint): string | null {
  const remotePrivate = remote.IPv4 || null;
  const remotePublic = publicIp(remote);
  if (remotePrivate === null) return remotePublic;
  if (!isBehindNat(remote)) return remotePrivate;
  const localNet = interfaceAddress(local);
  const remoteNum = parseIPv4(remotePrivate);
  const sameSubnet = localNet !== null && remoteNum !== null && sameNetwork(localNet, remoteNum);
  const sameNat = publicIp(local) !== null && publicIp(local) === remotePublic;
  return sameSubnet || sameNat ? remotePrivate : remotePublic;
}

function sameNetwork(net: NonNullable<ReturnType<typeof parseCidr>>, address: number): boolean {
  return address >= net.network && address <= net.broadcast;
}

/** The identity a device uses towards a peer when none is configured: what the peer sees as our source. */
export function defaultLocalIdentity(local: Endpoint): string {
  if (isBehindNat(local)) return publicIp(local) as string;
  return local.IPv4 || "%any";
}
