/**
 * LAN address plan: each LAN is a bridge in its own switch namespace, so
 * several routers (a VRRP pair) and hosts share one segment. Routers get .1,
 * .2 … in file order unless they name an address; hosts get .10, .11 …
 */
import { parseIPv4 } from "@tern/protocol";
import type { Topology } from "../topology/schema.ts";
import { cidr, hostAt, isHostOf, networkText } from "./ipv4.ts";
import { lanHosts, type Router } from "./routers.ts";
import type { PlanIssue, PlanLanAttachment } from "./types.ts";

export interface LanHostPlan {
  lan: string;
  name: string;
  /** Static address with prefix, or null for a DHCP host. */
  address: string | null;
  gateway: string | null;
}

export interface LanPlan {
  attachments: PlanLanAttachment[];
  hosts: LanHostPlan[];
  issues: PlanIssue[];
}

/** The first offset (from the network address) that static hosts are given. */
const HOST_OFFSET = 10;

export function planLans(t: Topology, routers: Router[]): LanPlan {
  const issues: PlanIssue[] = [];
  const attachments: PlanLanAttachment[] = [];
  const hosts: LanHostPlan[] = [];
  const allHosts = lanHosts(t);

  t.lans.forEach((lan, li) => {
    const subnet = cidr(lan.subnet);
    const size = subnet.broadcast - subnet.network;
    const taken = new Set<number>();
    // Generated addresses never take the hosts' gateway (a VRRP virtual IP is nobody's own address).
    const reserved = lan.gateway ? parseIPv4(lan.gateway) : null;
    const take = (path: (string | number)[], text: string): string | null => {
      const c = cidr(text);
      if (c.prefix !== subnet.prefix || c.network !== subnet.network || !isHostOf(subnet, c.address)) {
        issues.push({ path, message: `${text} is not a host address of the lan subnet ${lan.subnet}` });
        return null;
      }
      if (taken.has(c.address)) {
        issues.push({ path, message: `${text} is used twice on lan '${lan.name}'` });
        return null;
      }
      taken.add(c.address);
      return text;
    };
    const next = (from: number, path: (string | number)[]): string | null => {
      for (let n = from; n < size; n++) {
        const a = (subnet.network + n) >>> 0;
        if (!taken.has(a) && a !== reserved) {
          taken.add(a);
          return `${hostAt(subnet, n)}/${subnet.prefix}`;
        }
      }
      issues.push({ path, message: `lan '${lan.name}' (${networkText(subnet)}) has no free address left` });
      return null;
    };

    const members = routers.flatMap((router) => router.lan.filter((l) => l.spec.lan === lan.name).map((l) => ({ router, l })));
    // Explicit addresses first, so generated ones never take them.
    const explicit = new Map(
      members.filter((m) => m.l.spec.address).map((m) => [m, take([...m.l.path, "address"], m.l.spec.address!)]),
    );
    const lanHostsHere = allHosts.filter((h) => h.lan === lan.name);
    const explicitHosts = new Map(
      lanHostsHere.filter((h) => h.address && !h.dhcp).map((h) => [h.name, take([...h.path, "address"], h.address!)]),
    );
    for (const m of members) {
      const address = m.l.spec.address ? (explicit.get(m) ?? null) : next(1, m.l.path);
      attachments.push({ lan: lan.name, node: m.router.name, nodeIf: m.l.ifname, portIf: m.router.name, address });
    }

    let gateway: string | null = null;
    if (lan.gateway) {
      const g = parseIPv4(lan.gateway)!;
      if (!isHostOf(subnet, g))
        issues.push({ path: ["lans", li, "gateway"], message: `gateway ${lan.gateway} is not in ${lan.subnet}` });
      else gateway = lan.gateway;
    } else {
      const first = attachments.find((a) => a.lan === lan.name && a.address);
      gateway = first?.address?.split("/")[0] ?? null;
    }

    const hostFrom = Math.min(HOST_OFFSET, Math.max(1, Math.floor(size / 2)));
    for (const h of lanHostsHere) {
      let address: string | null = null;
      if (h.dhcp) address = null;
      else if (h.address) address = explicitHosts.get(h.name) ?? null;
      else address = next(hostFrom, h.path);
      hosts.push({ lan: lan.name, name: h.name, address, gateway });
      attachments.push({ lan: lan.name, node: h.name, nodeIf: "eth0", portIf: h.name, address });
    }
  });
  return { attachments, hosts, issues };
}
