/**
 * The router's interfaces as `register` reports them: every Ethernet-like
 * link with its MAC-based devId, first IPv4 address, default gateway and
 * whether the address came from DHCP.
 */
import { access } from "node:fs/promises";
import type { RegisterInterface } from "@tern/protocol";
import { parseAddrShow, parseRoutes } from "../drivers/links/iproute.ts";
import type { Runner } from "../runner.ts";

/** devId of an interface: its MAC, the one identity that survives renames and reboots. */
export const devIdOf = (mac: string) => `mac:${mac.toLowerCase()}`;

export async function discoverInterfaces(runner: Runner, sysClassNet = "/sys/class/net"): Promise<RegisterInterface[]> {
  const links = parseAddrShow((await runner.run(["ip", "-j", "-s", "addr", "show"])).stdout);
  const defaults = parseRoutes((await runner.run(["ip", "-j", "route", "show", "default"])).stdout);
  const out: RegisterInterface[] = [];
  for (const l of links) {
    if (l.linkType !== "ether" || !/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(l.mac)) continue;
    const wireless = await access(`${sysClassNet}/${l.name}/wireless`).then(
      () => true,
      () => false,
    );
    const first = l.addresses[0];
    const [ip, prefix] = first ? first.cidr.split("/") : ["", ""];
    const gateway = defaults.filter((r) => r.dev === l.name && r.gateway).sort((a, b) => a.metric - b.metric)[0]?.gateway ?? "";
    out.push({
      devId: devIdOf(l.mac),
      name: l.name,
      mac: l.mac.toLowerCase(),
      deviceType: wireless ? "wifi" : "ethernet",
      IPv4: ip ?? "",
      IPv4Mask: prefix ? Number(prefix) : null,
      gateway,
      dhcp: first?.dynamic ?? false,
    });
  }
  return out.slice(0, 64);
}
