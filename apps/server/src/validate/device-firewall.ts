/**
 * Firewall checks: filter rules name existing interfaces of the right kind
 * (inbound: WAN, outbound: LAN); LAN NAT rules name an assigned LAN, take
 * their source from its subnet, map to a prefix of the same length, and no two
 * rules' sources or translated prefixes overlap.
 */
import { type Cidr, cidrsOverlap, parseCidr } from "@tern/protocol";
import { cidrWithin } from "../compile/device-networks.ts";
import type { DeviceValidationInput } from "./device-input.ts";
import { lookupLan, show, staticSubnet } from "./net.ts";
import { invalid, type Problem } from "./problem.ts";

export function checkFirewall(device: DeviceValidationInput): Problem[] {
  const problems: Problem[] = [];
  const nat: { i: number; source: Cidr; translated: Cidr }[] = [];
  device.firewall.rules.forEach((rule, i) => {
    const at = (field: string) => `firewall.rules.${i}.${field}`;
    if (rule.direction !== "lanNat") {
      if (rule.interface === "") return;
      const iface = device.interfaces.find((x) => x.devId === rule.interface);
      const want = rule.direction === "inbound" ? "WAN" : "LAN";
      if (!iface) problems.push(invalid(at("interface"), `no interface has devId ${rule.interface}`));
      else if (!iface.isAssigned || iface.type !== want)
        problems.push(
          invalid(at("interface"), `${rule.direction} rules apply to assigned ${want} interfaces; ${iface.name} is not one`),
        );
      return;
    }
    const lan = lookupLan(device.interfaces, rule.interface);
    if ("reason" in lan)
      problems.push(invalid(at("interface"), `LAN NAT needs an assigned LAN interface with a static address: ${lan.reason}`));
    const source = parseCidr(rule.source);
    const translated = parseCidr(rule.translated);
    if (!source || !translated) return;
    if (!("reason" in lan) && !cidrWithin(source, lan.subnet))
      problems.push(
        invalid(at("source"), `source ${rule.source} is not inside the subnet ${show(lan.subnet)} of ${lan.iface.name}`),
      );
    if (source.prefix !== translated.prefix)
      problems.push(invalid(at("translated"), "translated prefix must have the same length as the source prefix"));
    for (const iface of device.interfaces) {
      const subnet = iface.isAssigned ? staticSubnet(iface) : null;
      if (subnet && cidrsOverlap(subnet, translated))
        problems.push(
          invalid(at("translated"), `translated prefix ${rule.translated} overlaps the subnet ${show(subnet)} of ${iface.name}`),
        );
    }
    // Disabled rules count too: enabling one later must not create a clash that was accepted now.
    for (const other of nat) {
      if (cidrsOverlap(other.source, source))
        problems.push(invalid(at("source"), `source ${rule.source} overlaps the source of LAN NAT rule ${other.i}`));
      if (cidrsOverlap(other.translated, translated))
        problems.push(
          invalid(at("translated"), `translated prefix ${rule.translated} overlaps the one of LAN NAT rule ${other.i}`),
        );
    }
    nat.push({ i, source, translated });
  });
  return problems;
}
