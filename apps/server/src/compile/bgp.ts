/**
 * BGP, only when enabled: neighbours sorted by address; `networks` = the LAN
 * subnets the device publishes (translated prefixes where LAN NAT maps them)
 * plus its tunnel loopbacks as /32s, unless `redistributeLan` is off.
 */
import type { ConfigBgp, ConfigTunnel } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { interfaceAddress, publishedSubnets } from "./device-networks.ts";
import { compareCidr, compareIPv4, compareText, sortedUnique } from "./order.ts";

export function compileBgp(ctx: CompileContext, tunnels: readonly ConfigTunnel[]): ConfigBgp | null {
  const device = ctx.input.device;
  const bgp = device.bgp;
  if (!bgp.enable) return null;
  if (bgp.localASN === null) {
    ctx.warn({ path: "bgp.localASN", message: "BGP left out: enabled without a local ASN" });
    return null;
  }
  const routerId = bgp.routerId || defaultRouterId(ctx, tunnels);
  if (routerId === null) {
    ctx.warn({
      path: "bgp.routerId",
      message: "BGP left out: no router id given and the device has no address to take one from",
    });
    return null;
  }
  const loopbacks = tunnels.map((t) => `${t.localLoopback}/32`);
  return {
    asn: bgp.localASN,
    routerId,
    keepalive: bgp.keepaliveInterval,
    hold: bgp.holdInterval,
    neighbors: bgp.neighbors
      .map((n) => ({
        ip: n.ip,
        remoteAsn: n.remoteASN,
        password: n.password,
        // The API requires multiHop whenever BGP is enabled (6.3.1); 1 (directly connected) is FRR's own default.
        multiHop: n.multiHop ?? 1,
        sendCommunity: n.sendCommunity,
      }))
      .sort((a, b) => compareIPv4(a.ip, b.ip) || a.remoteAsn - b.remoteAsn),
    networks: bgp.redistributeLan ? sortedUnique([...publishedSubnets(device), ...loopbacks], compareCidr) : [],
  };
}

/**
 * A router id that does not move when tunnels come and go: the address of the
 * first assigned LAN interface (by name), else of any assigned interface,
 * else the lowest tunnel loopback.
 */
function defaultRouterId(ctx: CompileContext, tunnels: readonly ConfigTunnel[]): string | null {
  const withAddress = [...ctx.assigned.values()]
    .filter((i) => interfaceAddress(i) !== null)
    .sort((a, b) => Number(b.type === "LAN") - Number(a.type === "LAN") || compareText(a.name, b.name));
  if (withAddress[0]) return withAddress[0].IPv4;
  const loopbacks = tunnels.map((t) => t.localLoopback).sort(compareIPv4);
  return loopbacks[0] ?? null;
}
