/**
 * Deterministic identity of simulated device `index`: machine id, host name
 * and interfaces are derived from the index on demand instead of being stored,
 * which keeps a simulated device down to a few hundred bytes of its own.
 */
import type { InterfaceState, RegisterInterface } from "@tern/protocol";
import type { PublicAddress } from "./types.ts";

export function machineId(prefix: string, index: number): string {
  return `${prefix}-${String(index).padStart(6, "0")}`;
}

export function hostname(prefix: string, index: number): string {
  return `${prefix}-${index}`.toLowerCase().replace(/[^a-z0-9-]/g, "-");
}

/** Two octets from the index, so 65,536 devices get distinct addresses. */
function octets(index: number): [number, number] {
  return [(index >> 8) & 0xff, index & 0xff];
}

function mac(index: number, port: number): string {
  const [hi, lo] = octets(index);
  return ["02", "00", hex(port), hex(hi), hex(lo), "01"].join(":");
}

function hex(n: number): string {
  return n.toString(16).padStart(2, "0");
}

/** WAN `eth0` (static, with a public address) and LAN `eth1`. */
export function registerInterfaces(index: number): RegisterInterface[] {
  const [hi, lo] = octets(index);
  return [
    {
      devId: "pci:0000:00:03.0",
      name: "eth0",
      mac: mac(index, 0),
      deviceType: "ethernet",
      IPv4: `100.${64 + (hi & 0x3f)}.${lo}.2`,
      IPv4Mask: 24,
      gateway: `100.${64 + (hi & 0x3f)}.${lo}.1`,
      dhcp: false,
    },
    {
      devId: "pci:0000:00:04.0",
      name: "eth1",
      mac: mac(index, 1),
      deviceType: "ethernet",
      IPv4: `10.${hi}.${lo}.1`,
      IPv4Mask: 24,
      gateway: "",
      dhcp: false,
    },
  ];
}

/** The WAN interface's own address when it differs from the registered one (a new DHCP lease). */
export interface WanAddress {
  IPv4: string;
  IPv4Mask: number | null;
}

/** Public address the WAN interface is seen from, before any override. */
export function defaultPublicAddress(index: number): PublicAddress {
  const [hi, lo] = octets(index);
  return { publicIp: `198.${18 + (hi & 1)}.${lo}.${(hi >> 1) + 1}`, publicPort: 4500 };
}

/**
 * Live interface state as a status message reports it. Byte counters grow
 * with time so consecutive reports differ like a real device's.
 */
export function interfaceStates(
  index: number,
  uptimeMs: number,
  publicOverride: PublicAddress | undefined,
  wanOverride?: WanAddress,
): InterfaceState[] {
  const bytes = Math.floor(uptimeMs / 10);
  return registerInterfaces(index).map((itf, port) => {
    const pub = port === 0 ? (publicOverride ?? defaultPublicAddress(index)) : { publicIp: "", publicPort: null };
    return {
      devId: itf.devId,
      name: itf.name,
      operState: "up",
      IPv4: port === 0 && wanOverride ? wanOverride.IPv4 : itf.IPv4,
      IPv4Mask: port === 0 && wanOverride ? wanOverride.IPv4Mask : itf.IPv4Mask,
      gateway: itf.gateway,
      mac: itf.mac,
      mtu: 1500,
      rxBytes: bytes * (port + 2),
      txBytes: bytes * (port + 1),
      publicIp: pub.publicIp,
      publicPort: pub.publicPort,
      lte: null,
    };
  });
}
