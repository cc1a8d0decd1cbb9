/** What the firewall render needs, derived from a DeviceConfig plus facts only the agent knows. */
import type { ConfigFilterRule, DeviceConfig } from "@tern/protocol";
import { PROBE_PORT } from "../../probes/types.ts";
import type { DriverContext } from "../driver.ts";

/**
 * Tunnel-side devices when the IKEv2 driver does not say otherwise:
 * kernel-libipsec's one TUN (`ipsec0`) and XFRM interfaces (`xfrm*`, an nft
 * prefix match).
 */
export const DEFAULT_TUNNEL_DEVICES = ["ipsec0", "xfrm*"] as const;

/**
 * Who knows which devices carry tunnel traffic: the IKEv2 driver (kernel-
 * libipsec's one TUN, or one XFRM interface per tunnel).
 */
export interface TunnelDeviceSource {
  /** The devices `apply` must use for `config` (may probe the kernel once); empty without tunnels. */
  tunnelDevices(config: DeviceConfig, ctx: DriverContext): Promise<readonly string[]>;
  /** Best knowledge without running anything, for `plan`. */
  plannedTunnelDevices(config: DeviceConfig): readonly string[];
}

export interface FirewallInput {
  wanInterfaces: string[];
  /** Device names (or nft `name*` prefixes) that carry tunnel traffic: the NAT side. */
  tunnelDevices: string[];
  inbound: ConfigFilterRule[];
  outbound: ConfigFilterRule[];
  lanNat: DeviceConfig["firewall"]["lanNat"];
  /** IKE/ESP must pass on WAN when the device has tunnels. */
  hasTunnels: boolean;
  /** BGP neighbours whose sessions must pass a catch-all deny. */
  bgpNeighbors: string[];
  probePort: number;
}

export function firewallInput(config: DeviceConfig, tunnelDevices: readonly string[] = DEFAULT_TUNNEL_DEVICES): FirewallInput {
  return {
    wanInterfaces: config.interfaces.filter((i) => i.type === "WAN").map((i) => i.name),
    tunnelDevices: [...tunnelDevices],
    inbound: config.firewall.inbound,
    outbound: config.firewall.outbound,
    lanNat: config.firewall.lanNat,
    // Remote access (remote worker VPN) needs IKE and ESP let in just as tunnels do.
    hasTunnels: config.tunnels.length > 0 || config.remoteVpn !== undefined,
    bgpNeighbors: config.bgp?.neighbors.map((n) => n.ip) ?? [],
    probePort: PROBE_PORT,
  };
}

/** True when the section needs no table at all (teardown). */
export function firewallEmpty(input: FirewallInput): boolean {
  return input.inbound.length === 0 && input.outbound.length === 0 && input.lanNat.length === 0;
}
