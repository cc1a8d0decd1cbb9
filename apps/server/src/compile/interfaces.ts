/** Interfaces section: assigned interfaces only, by name; WAN carries its default gateway and metric. */
import type { ConfigInterface } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { interfaceAddress } from "./device-networks.ts";
import { compareText, sortedUnique } from "./order.ts";

export function compileInterfaces(ctx: CompileContext): ConfigInterface[] {
  const out: ConfigInterface[] = [];
  ctx.input.device.interfaces.forEach((iface, index) => {
    if (!iface.isAssigned) return;
    // A DHCP client learns address and gateway at run time; a stale reported address must not be configured statically.
    const address = iface.dhcp ? null : interfaceAddress(iface);
    const isWan = iface.type === "WAN";
    const labels = iface.pathlabels.filter((id) => {
      if (ctx.pathLabelIds.has(id)) return true;
      ctx.warn({
        path: `interfaces.${index}.pathlabels`,
        message: `path label ${id} does not exist in the organization; ignored`,
      });
      return false;
    });
    out.push({
      devId: iface.devId,
      name: iface.name,
      type: iface.type,
      dhcp: iface.dhcp,
      address: address ? `${iface.IPv4}/${address.prefix}` : null,
      gateway: isWan && !iface.dhcp && iface.gateway ? iface.gateway : null,
      metric: iface.metric,
      mtu: iface.mtu,
      pathLabels: sortedUnique(labels, compareText),
    });
  });
  return out.sort((a, b) => compareText(a.name, b.name));
}
