/**
 * The links section of a config as the state the system should have: per
 * interface its MTU, addresses and DHCP client; the static routes; and one
 * default route per WAN gateway. Pure: the same config and leases give the
 * same result, so it is golden-tested and used by `plan`.
 */
import { type DeviceConfig, formatNetwork, parseCidr } from "@tern/protocol";
import { AgentError } from "../../errors.ts";
import type { DhcpLease } from "./dhcp-client.ts";

export interface DesiredLink {
  name: string;
  devId: string;
  mtu: number;
  dhcp: boolean;
  /** CIDR addresses ("10.0.0.2/24") the agent keeps on the interface. */
  addresses: string[];
}

export interface DesiredRoute {
  /** Normalized network ("0.0.0.0/0" for default). */
  dst: string;
  gateway: string;
  /** Null lets the kernel pick the device from the gateway. */
  dev: string | null;
  metric: number;
  /** Where the route comes from, for messages: "static", "wan0 gateway", "wan1 dhcp". */
  origin: string;
}

export interface DesiredLinks {
  links: DesiredLink[];
  routes: DesiredRoute[];
}

/** Checks what can be checked without the system; throws before anything is changed. */
export function verifyLinks(config: DeviceConfig): void {
  const names = new Set<string>();
  for (const i of config.interfaces) {
    if (names.has(i.name)) throw new AgentError("INVALID_CONFIG", `interface ${i.name} appears twice`);
    names.add(i.name);
    if (i.dhcp && i.address !== null)
      throw new AgentError(
        "INVALID_CONFIG",
        `interface ${i.name}: a DHCP client and a static address ${i.address} exclude each other`,
      );
  }
  for (const r of config.routes)
    if (r.ifname !== null && !names.has(r.ifname))
      throw new AgentError(
        "INVALID_CONFIG",
        `route ${r.destination} via ${r.gateway}: interface ${r.ifname} is not in the config`,
      );
}

/** The desired state for `config`, with DHCP-learned addresses and gateways from `leases` (by interface name). */
export function desiredLinks(config: DeviceConfig, leases: ReadonlyMap<string, DhcpLease> = new Map()): DesiredLinks {
  verifyLinks(config);
  const links: DesiredLink[] = [];
  const routes: DesiredRoute[] = [];
  for (const i of config.interfaces) {
    const lease = i.dhcp ? leases.get(i.name) : undefined;
    const addresses = i.dhcp ? (lease ? [`${lease.address}/${lease.prefix}`] : []) : i.address ? [i.address] : [];
    links.push({ name: i.name, devId: i.devId, mtu: i.mtu, dhcp: i.dhcp, addresses });
    const gateway = i.dhcp ? (lease?.routers[0] ?? null) : i.gateway;
    if (i.type === "WAN" && gateway !== null)
      routes.push({
        dst: "0.0.0.0/0",
        gateway,
        dev: i.name,
        metric: i.metric,
        origin: `${i.name} ${i.dhcp ? "dhcp" : "gateway"}`,
      });
  }
  for (const r of config.routes) {
    const cidr = parseCidr(r.destination);
    if (!cidr) throw new AgentError("INVALID_CONFIG", `route destination ${r.destination} is not a network`);
    routes.push({ dst: formatNetwork(cidr), gateway: r.gateway, dev: r.ifname, metric: r.metric, origin: "static" });
  }
  // The kernel keys IPv4 routes by destination and metric: two with the same key cannot coexist.
  const seen = new Map<string, DesiredRoute>();
  for (const r of routes) {
    const key = routeKey(r);
    const other = seen.get(key);
    if (other)
      throw new AgentError(
        "ROUTE_CONFLICT",
        `routes to ${r.dst} with metric ${r.metric} from ${other.origin} and ${r.origin} collide; give them different metrics`,
      );
    seen.set(key, r);
  }
  return { links, routes };
}

/** The kernel's identity of an IPv4 route in one table. */
export function routeKey(r: { dst: string; metric: number }): string {
  return `${r.dst} metric ${r.metric}`;
}
