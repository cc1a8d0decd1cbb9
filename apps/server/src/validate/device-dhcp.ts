/** DHCP server checks: a LAN to serve, a range and reservations inside it, well-formed options. */
import { parseIPv4 } from "@tern/protocol";
import type { DeviceValidationInput } from "./device-input.ts";
import { inside, isNetworkOrBroadcast, lookupLan, show } from "./net.ts";
import { invalid, type Problem } from "./problem.ts";

/** Options whose value is a comma-separated list of IPv4 addresses. */
const ADDRESS_OPTIONS = new Set(["routers", "domain-name-servers", "ntp-servers"]);

export function checkDhcp(device: DeviceValidationInput): Problem[] {
  const problems: Problem[] = [];
  const served = new Map<string, number>();
  device.dhcp.forEach((server, i) => {
    const at = (field: string) => `dhcp.${i}.${field}`;
    const lan = lookupLan(device.interfaces, server.interface);
    if ("reason" in lan) {
      problems.push(invalid(at("interface"), `DHCP server needs an assigned LAN interface with a static address: ${lan.reason}`));
      return;
    }
    const { iface, subnet } = lan;
    const other = served.get(server.interface);
    if (other !== undefined) problems.push(invalid(at("interface"), `interface ${iface.name} already has DHCP server ${other}`));
    else served.set(server.interface, i);

    const start = parseIPv4(server.rangeStart) ?? 0;
    const end = parseIPv4(server.rangeEnd) ?? 0;
    const own = parseIPv4(iface.IPv4) ?? -1;
    for (const [field, ip] of [
      ["rangeStart", server.rangeStart],
      ["rangeEnd", server.rangeEnd],
    ] as const) {
      if (!inside(subnet, ip)) problems.push(invalid(at(field), `${ip} is outside the subnet ${show(subnet)} of ${iface.name}`));
      else if (isNetworkOrBroadcast(subnet, ip))
        problems.push(invalid(at(field), `${ip} is the network or broadcast address of ${show(subnet)}`));
    }
    if (start > end) problems.push(invalid(at("rangeEnd"), "rangeStart must not be after rangeEnd"));
    else if (own >= start && own <= end)
      problems.push(
        invalid(
          at("rangeStart"),
          `the range ${server.rangeStart}-${server.rangeEnd} contains the interface address ${iface.IPv4}`,
        ),
      );
    if (server.defaultLeaseTime > server.maxLeaseTime)
      problems.push(invalid(at("defaultLeaseTime"), "defaultLeaseTime must not exceed maxLeaseTime"));

    const macs = new Map<string, number>();
    const ips = new Map<string, number>();
    server.macAssign.forEach((r, j) => {
      const rat = (field: string) => at(`macAssign.${j}.${field}`);
      const mac = r.mac.toLowerCase();
      if (macs.has(mac)) problems.push(invalid(rat("mac"), `MAC ${mac} is reserved twice (also reservation ${macs.get(mac)})`));
      else macs.set(mac, j);
      if (ips.has(r.ipv4))
        problems.push(invalid(rat("ipv4"), `${r.ipv4} is reserved twice (also reservation ${ips.get(r.ipv4)})`));
      else ips.set(r.ipv4, j);
      if (!inside(subnet, r.ipv4))
        problems.push(invalid(rat("ipv4"), `${r.ipv4} is outside the subnet ${show(subnet)} of ${iface.name}`));
      else if (r.ipv4 === iface.IPv4) problems.push(invalid(rat("ipv4"), `${r.ipv4} is the interface's own address`));
      else if (isNetworkOrBroadcast(subnet, r.ipv4))
        problems.push(invalid(rat("ipv4"), `${r.ipv4} is the network or broadcast address of ${show(subnet)}`));
    });

    const names = new Set<string>();
    server.options.forEach((o, k) => {
      const oat = (field: string) => at(`options.${k}.${field}`);
      if (names.has(o.option)) problems.push(invalid(oat("option"), `option ${o.option} is given twice`));
      names.add(o.option);
      const problem = optionValueProblem(o.option, o.value);
      if (problem) problems.push(invalid(oat("value"), problem));
      else if (o.option === "routers")
        for (const ip of o.value.split(",").map((s) => s.trim()))
          if (!inside(subnet, ip))
            problems.push(
              invalid(oat("value"), `router ${ip} is outside the subnet ${show(subnet)}: clients could not reach it`),
            );
    });
  });
  return problems;
}

/** What kea would refuse in an option value, or null. */
function optionValueProblem(option: string, value: string): string | null {
  if (ADDRESS_OPTIONS.has(option)) {
    const bad = value.split(",").find((s) => parseIPv4(s.trim()) === null);
    return bad === undefined ? null : `${option} takes IPv4 addresses separated by commas; "${bad.trim()}" is not one`;
  }
  if (option === "interface-mtu") {
    const n = Number(value);
    return Number.isInteger(n) && n >= 68 && n <= 65535 ? null : "interface-mtu must be a whole number from 68 to 65535";
  }
  if (option === "time-offset") {
    const n = Number(value);
    return Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 ? null : "time-offset must be a whole number of seconds";
  }
  return null;
}
