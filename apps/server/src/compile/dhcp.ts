/**
 * DHCP servers, one per LAN interface: the subnet comes from the interface
 * address; options carry their codes; `routers` is the VRRP virtual IP when
 * the LAN is in a VRRP group, else the interface address unless given.
 */
import { type ConfigDhcpServer, DHCP_OPTION_CODES, formatNetwork } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { interfaceAddress } from "./device-networks.ts";
import { compareIPv4, compareText } from "./order.ts";

/** The virtual IP of the VRRP group (lowest virtual router id) this device's LAN devId serves, if any. */
export function vrrpVirtualIpFor(ctx: CompileContext, devId: string): string | null {
  const groups = ctx.input.vrrpGroups
    .filter((g) => g.devices.some((m) => m.device === ctx.input.device.id && m.interface === devId))
    .sort((a, b) => a.virtualRouterId - b.virtualRouterId);
  return groups[0]?.virtualIp ?? null;
}

export function compileDhcp(ctx: CompileContext): ConfigDhcpServer[] {
  const out: ConfigDhcpServer[] = [];
  const served = new Set<string>();
  // A second server on the same LAN is invalid input; which one survives must not depend on list order.
  const servers = ctx.input.device.dhcp
    .map((server, index) => ({ server, index }))
    .sort((x, y) => compareText(x.server.interface, y.server.interface) || compareIPv4(x.server.rangeStart, y.server.rangeStart));
  for (const { server, index } of servers) {
    const path = `dhcp.${index}`;
    const iface = ctx.assigned.get(server.interface);
    const subnet = iface ? interfaceAddress(iface) : null;
    if (iface?.type !== "LAN" || subnet === null) {
      ctx.warn({
        path,
        message: `DHCP server left out: interface ${server.interface} is not an assigned LAN interface with an address`,
      });
      continue;
    }
    if (served.has(iface.devId)) {
      ctx.warn({ path, message: `DHCP server left out: interface ${iface.name} already has one` });
      continue;
    }
    served.add(iface.devId);

    const options = new Map<string, { code: number; name: string; value: string }>();
    for (const o of server.options) options.set(o.option, { code: DHCP_OPTION_CODES[o.option], name: o.option, value: o.value });
    const virtualIp = vrrpVirtualIpFor(ctx, iface.devId);
    if (virtualIp !== null) options.set("routers", { code: DHCP_OPTION_CODES.routers, name: "routers", value: virtualIp });
    else if (!options.has("routers"))
      options.set("routers", { code: DHCP_OPTION_CODES.routers, name: "routers", value: iface.IPv4 });

    out.push({
      interface: iface.name,
      subnet: formatNetwork(subnet),
      rangeStart: server.rangeStart,
      rangeEnd: server.rangeEnd,
      // DNS servers are tried in order: keep the admin's order.
      dns: [...server.dns],
      options: [...options.values()].sort((a, b) => a.code - b.code),
      reservations: server.macAssign
        .map((m) => ({ host: m.host, mac: m.mac.toLowerCase(), ipv4: m.ipv4, sendHostName: m.useHostNameAsDhcpOption }))
        .sort((a, b) => compareIPv4(a.ipv4, b.ipv4) || compareText(a.mac, b.mac)),
      defaultLeaseTime: server.defaultLeaseTime,
      maxLeaseTime: server.maxLeaseTime,
    });
  }
  return out.sort((a, b) => compareText(a.interface, b.interface));
}
