/**
 * What the LAN overlap check compares, as index rows: a device's static LAN
 * subnets (`lan`, as `checkLanOverlap` reads them) and the networks it
 * publishes to the overlay (`published`, its LAN subnets after LAN 1:1 NAT).
 * Pure: the same derivation feeds the side table and the check's query.
 */
import { type DeviceInterface, type Firewall, formatNetwork, parseCidr } from "@tern/protocol";
import { publishedSubnets } from "../../compile/device-networks.ts";
import { staticSubnet } from "../../validate/net.ts";

export type LanKind = "lan" | "published";
export interface LanIndexRow {
  kind: LanKind;
  /** Network address and prefix, host bits cleared (PostgreSQL's `cidr` refuses host bits). */
  subnet: string;
}

type Indexed = { interfaces: readonly DeviceInterface[]; firewall: Firewall };

/** The device's index rows, without duplicates. */
export function lanIndexRows(device: Indexed): LanIndexRow[] {
  const rows = new Map<string, LanIndexRow>();
  const add = (kind: LanKind, text: string | null) => {
    const net = text === null ? null : parseCidr(text);
    if (!net) return;
    const subnet = formatNetwork(net);
    rows.set(`${kind} ${subnet}`, { kind, subnet });
  };
  for (const iface of device.interfaces) {
    if (!iface.isAssigned || iface.type !== "LAN") continue;
    const net = staticSubnet(iface);
    if (net) add("lan", formatNetwork(net));
  }
  for (const net of publishedSubnets(device)) add("published", net);
  return [...rows.values()];
}

/**
 * What to look up for a device's overlap check: its LAN subnets against the
 * others' `lan` rows, the translated prefixes of its enabled LAN NAT rules
 * against the others' `published` rows (as `checkLanOverlap` compares them).
 */
export function lanProbes(device: Indexed): LanIndexRow[] {
  const probes = new Map<string, LanIndexRow>();
  for (const row of lanIndexRows(device)) if (row.kind === "lan") probes.set(`lan ${row.subnet}`, row);
  for (const rule of device.firewall.rules) {
    if (rule.direction !== "lanNat" || !rule.enabled) continue;
    const net = parseCidr(rule.translated);
    if (net) probes.set(`published ${formatNetwork(net)}`, { kind: "published", subnet: formatNetwork(net) });
  }
  return [...probes.values()];
}
