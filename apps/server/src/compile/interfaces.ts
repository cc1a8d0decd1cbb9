/** Interfaces section: assigned interfaces only, by name; WAN carries its default gateway and metric. */
import type { ConfigInterface, DeviceInterface } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { interfaceAddress } from "./device-networks.ts";
import { compareText, sortedUnique } from "./order.ts";

/**
 * The modem or access point settings of an interface of that kind, secrets
 * in clear (the compile input has them opened). Absent otherwise, so configs
 * without radios hash as before.
 */
function radioSections(iface: DeviceInterface): Pick<ConfigInterface, "lte" | "wifi"> {
  if (iface.deviceType === "lte" && iface.lte) {
    const l = iface.lte;
    return {
      lte: {
        apn: l.apn,
        ipType: l.ipType,
        auth: l.auth,
        username: l.username,
        password: l.password ?? "",
        pin: l.pin ?? "",
        allowRoaming: l.allowRoaming,
      },
    };
  }
  if (iface.deviceType === "wifi" && iface.wifi) {
    const w = iface.wifi;
    return {
      wifi: {
        ssid: w.ssid,
        band: w.band,
        channel: w.channel,
        country: w.country,
        security: w.security,
        passphrase: w.passphrase ?? "",
        hidden: w.hidden,
      },
    };
  }
  return {};
}

/** The API's placeholder line rate of an interface nobody measured (protocol's DeviceInterface default). */
const PLACEHOLDER_MBPS = { tx: 100, rx: 100 };

/**
 * A WAN's line rate when an admin entered one: the agent's management QoS
 * shapes the WAN to 95 % of `tx`, so the queue forms on the router and the
 * control link and probes go first (the spec's limits 1 and 2). The 100/100
 * every interface carries by default is a placeholder, not a measured line:
 * shaping a faster line to it would cap it, so it is left out (priority only).
 */
function lineRate(iface: DeviceInterface): Pick<ConfigInterface, "bandwidthMbps"> {
  const b = iface.bandwidthMbps;
  if (iface.type !== "WAN" || (b.tx === PLACEHOLDER_MBPS.tx && b.rx === PLACEHOLDER_MBPS.rx)) return {};
  return { bandwidthMbps: { tx: b.tx, rx: b.rx } };
}

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
      ...lineRate(iface),
      ...radioSections(iface),
    });
  });
  return out.sort((a, b) => compareText(a.name, b.name));
}
