/**
 * The router's interfaces as `register` reports them: every Ethernet-like
 * link with its MAC-based devId, and every cellular modem's network port
 * (DEVTYPE=wwan, often raw IP without a MAC), with first IPv4 address, default
 * gateway and whether the address came from DHCP. Wireless NICs report as
 * `wifi`, modem ports as `lte`.
 */
import { access, readFile, readlink } from "node:fs/promises";
import { basename } from "node:path";
import type { RegisterInterface } from "@tern/protocol";
import { parseAddrShow, parseRoutes } from "../drivers/links/iproute.ts";
import type { Runner } from "../runner.ts";

/** devId of an interface: its MAC, the one identity that survives renames and reboots. */
export const devIdOf = (mac: string) => `mac:${mac.toLowerCase()}`;

const MAC = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i;

/** True when the kernel types the link as a WWAN (modem) port: `DEVTYPE=wwan` in its uevent. */
async function isWwan(sysClassNet: string, name: string): Promise<boolean> {
  const uevent = await readFile(`${sysClassNet}/${name}/uevent`, "utf8").catch(() => "");
  return /^DEVTYPE=wwan$/m.test(uevent);
}

/**
 * devId of a modem port without a MAC (raw IP): its bus position (`wwan:1-1.3:1.4`,
 * the USB interface the modem sits on), which survives renames; the name when sysfs has none.
 */
async function wwanDevId(sysClassNet: string, name: string): Promise<string> {
  const device = await readlink(`${sysClassNet}/${name}/device`).catch(() => null);
  return `wwan:${device ? basename(device) : name}`;
}

export async function discoverInterfaces(runner: Runner, sysClassNet = "/sys/class/net"): Promise<RegisterInterface[]> {
  const links = parseAddrShow((await runner.run(["ip", "-j", "-s", "addr", "show"])).stdout);
  const defaults = parseRoutes((await runner.run(["ip", "-j", "route", "show", "default"])).stdout);
  const out: RegisterInterface[] = [];
  for (const l of links) {
    const wwan = await isWwan(sysClassNet, l.name);
    const hasMac = l.linkType === "ether" && MAC.test(l.mac);
    if (!hasMac && !(wwan && (l.linkType === "none" || l.linkType === "ether"))) continue;
    const wireless = await access(`${sysClassNet}/${l.name}/wireless`).then(
      () => true,
      () => false,
    );
    const first = l.addresses[0];
    const [ip, prefix] = first ? first.cidr.split("/") : ["", ""];
    const gateway = defaults.filter((r) => r.dev === l.name && r.gateway).sort((a, b) => a.metric - b.metric)[0]?.gateway ?? "";
    out.push({
      devId: hasMac ? devIdOf(l.mac) : await wwanDevId(sysClassNet, l.name),
      name: l.name,
      mac: hasMac ? l.mac.toLowerCase() : "",
      deviceType: wwan ? "lte" : wireless ? "wifi" : "ethernet",
      IPv4: ip ?? "",
      IPv4Mask: prefix ? Number(prefix) : null,
      gateway,
      dhcp: first?.dynamic ?? false,
    });
  }
  return out.slice(0, 64);
}
