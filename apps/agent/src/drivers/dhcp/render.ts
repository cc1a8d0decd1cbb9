/**
 * Pure rendering of the kea-dhcp4 configuration from the DHCP section. The
 * LAN interface's own address is part of it (`interfaces: ["lan0/addr"]`),
 * so an address change changes the file and kea is reconfigured: it never
 * keeps serving with a stale address. Golden-tested.
 */
import { type ConfigDhcpServer, cidrContains, parseCidr, parseIPv4 } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";
import type { DhcpPaths } from "./paths.ts";

/** Options whose value is one string: a comma in it must not split it into a list. */
const STRING_OPTIONS = new Set([12, 14, 15, 17, 18, 40, 47, 62, 64, 66, 67]);
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;
const ROUTERS = 3;
const DNS = 6;
const HOST_NAME = 12;

/** A stable kea subnet id from the network address (1 … 2^32-2), so leases stay with their subnet across changes. */
export function subnetId(subnet: string): number {
  const c = parseCidr(subnet);
  return c ? (c.network % 4294967294) + 1 : 1;
}

/** Shortest lease a client may ask for: a quarter of the default, at least 60 s. */
export function minLeaseTime(server: Pick<ConfigDhcpServer, "defaultLeaseTime">): number {
  return Math.min(server.defaultLeaseTime, Math.max(60, Math.floor(server.defaultLeaseTime / 4)));
}

function escapeData(code: number, value: string): string {
  return STRING_OPTIONS.has(code) ? value.replace(/,/g, "\\,") : value;
}

/** Checks one server; `address` is the interface's own address ("a.b.c.d/n") when known. */
export function validateDhcp(servers: ConfigDhcpServer[], addresses: ReadonlyMap<string, string | null>): void {
  const seen = new Set<string>();
  servers.forEach((s, i) => {
    const path = `dhcp.${i}`;
    if (seen.has(s.interface)) throw invalidConfig(`${path}.interface`, `a DHCP server on ${s.interface} is defined twice`);
    seen.add(s.interface);
    const net = parseCidr(s.subnet);
    if (!net) throw invalidConfig(`${path}.subnet`, "must be a network a.b.c.d/n");
    const start = parseIPv4(s.rangeStart) ?? -1;
    const end = parseIPv4(s.rangeEnd) ?? -1;
    if (!cidrContains(net, start)) throw invalidConfig(`${path}.rangeStart`, `${s.rangeStart} is outside ${s.subnet}`);
    if (!cidrContains(net, end)) throw invalidConfig(`${path}.rangeEnd`, `${s.rangeEnd} is outside ${s.subnet}`);
    if (start > end) throw invalidConfig(`${path}.rangeEnd`, `${s.rangeEnd} is before ${s.rangeStart}`);
    if (s.defaultLeaseTime > s.maxLeaseTime) {
      throw invalidConfig(`${path}.maxLeaseTime`, `${s.maxLeaseTime} s is shorter than defaultLeaseTime ${s.defaultLeaseTime} s`);
    }
    const address = addresses.get(s.interface);
    if (address) {
      const own = parseIPv4(address.split("/")[0] ?? "");
      if (own === null || !cidrContains(net, own))
        throw invalidConfig(`${path}.subnet`, `${s.subnet} does not contain ${s.interface}'s address ${address}`);
    }
    const macs = new Set<string>();
    const ips = new Set<string>();
    s.reservations.forEach((r, j) => {
      const rp = `${path}.reservations.${j}`;
      if (!MAC.test(r.mac)) throw invalidConfig(`${rp}.mac`, "must be a MAC address like 02:00:00:00:00:01");
      if (macs.has(r.mac.toLowerCase())) throw invalidConfig(`${rp}.mac`, `${r.mac} is reserved twice`);
      if (ips.has(r.ipv4)) throw invalidConfig(`${rp}.ipv4`, `${r.ipv4} is reserved twice`);
      if (!cidrContains(net, parseIPv4(r.ipv4) ?? -1)) throw invalidConfig(`${rp}.ipv4`, `${r.ipv4} is outside ${s.subnet}`);
      macs.add(r.mac.toLowerCase());
      ips.add(r.ipv4);
    });
    s.options.forEach((o, j) => {
      if (o.value.trim() === "") throw invalidConfig(`${path}.options.${j}.value`, "must not be empty");
    });
  });
}

interface OptionData {
  code: number;
  data: string;
  "always-send"?: boolean;
}

function subnetOptions(s: ConfigDhcpServer, ownIp: string | null): OptionData[] {
  const out: OptionData[] = [];
  const codes = new Set(s.options.map((o) => o.code));
  // A LAN needs a gateway: the router's own address unless the server says otherwise (e.g. a VRRP virtual IP).
  if (!codes.has(ROUTERS) && ownIp) out.push({ code: ROUTERS, data: ownIp });
  if (!codes.has(DNS) && s.dns.length > 0) out.push({ code: DNS, data: s.dns.join(", ") });
  for (const o of s.options) out.push({ code: o.code, data: escapeData(o.code, o.value) });
  return out;
}

/** The whole kea-dhcp4 configuration. `addresses` maps a LAN interface to its own address ("a.b.c.d/n"). */
export function renderKeaConf(
  servers: ConfigDhcpServer[],
  addresses: ReadonlyMap<string, string | null>,
  paths: DhcpPaths,
): string {
  const interfaces = servers.map((s) => {
    const ip = addresses.get(s.interface)?.split("/")[0];
    return ip ? `${s.interface}/${ip}` : s.interface;
  });
  const subnets = servers.map((s) => {
    const ownIp = addresses.get(s.interface)?.split("/")[0] ?? null;
    return {
      id: subnetId(s.subnet),
      subnet: s.subnet,
      interface: s.interface,
      "valid-lifetime": s.defaultLeaseTime,
      "min-valid-lifetime": minLeaseTime(s),
      "max-valid-lifetime": s.maxLeaseTime,
      pools: [{ pool: `${s.rangeStart} - ${s.rangeEnd}` }],
      "option-data": subnetOptions(s, ownIp),
      reservations: s.reservations.map((r) => ({
        "hw-address": r.mac.toLowerCase(),
        "ip-address": r.ipv4,
        ...(r.sendHostName
          ? { hostname: r.host, "option-data": [{ code: HOST_NAME, data: escapeData(HOST_NAME, r.host), "always-send": true }] }
          : {}),
        "user-context": { host: r.host },
      })),
      ...(addresses.get(s.interface) ? { "user-context": { "interface-address": addresses.get(s.interface) } } : {}),
    };
  });
  const conf = {
    Dhcp4: {
      "interfaces-config": { interfaces, "dhcp-socket-type": "raw" },
      "control-socket": { "socket-type": "unix", "socket-name": paths.socket },
      "lease-database": { type: "memfile", persist: true, name: paths.leases, "lfc-interval": 3600 },
      authoritative: true,
      "calculate-tee-times": true,
      subnet4: subnets,
      loggers: [{ name: "kea-dhcp4", output_options: [{ output: paths.log }], severity: "INFO" }],
    },
  };
  return `${JSON.stringify(conf, null, 2)}\n`;
}
