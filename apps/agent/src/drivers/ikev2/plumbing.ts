/**
 * The kernel side of route-based tunnels, owned by the driver: tunnel
 * loopback addresses (on `lo` with LO_LABEL for kernel-libipsec, on the
 * tunnel's XFRM interface otherwise), XFRM interfaces, and routes to the
 * remote loopback and subnets through the tunnel device with the local
 * loopback as source (route protocol IKEV2_ROUTE_PROTO). Observed with
 * `ip -j`, diffed, and changed only where they differ.
 *
 * kernel-libipsec installs a route for every outbound policy and fails the
 * whole CHILD_SA when no local address lies inside a local traffic selector
 * (a 1:1-NAT translated prefix never has one). So in that mode a local subnet
 * without a local address gets its network address (never a usable host) on
 * `lo` with the driver's label. XFRM interfaces have no such need.
 */
import { type ConfigTunnel, cidrContains, parseCidr, parseIPv4 } from "@tern/protocol";
import type { Runner } from "../../runner.ts";
import { IKEV2_ROUTE_PROTO, LIBIPSEC_DEVICE, LO_LABEL, xfrmIfId, xfrmIfName } from "./names.ts";
import type { Dataplane } from "./render.ts";

export interface OwnedAddress {
  dev: string;
  cidr: string;
  label?: string;
}
export interface OwnedLink {
  name: string;
  parent: string | null;
  ifId: number;
}
export interface OwnedRoute {
  dst: string;
  dev: string;
  /** Preferred source, "" for none. */
  src: string;
}
export interface Plumbing {
  links: OwnedLink[];
  addresses: OwnedAddress[];
  routes: OwnedRoute[];
}

/** What is in the kernel: what the driver owns, and the device's other IPv4 addresses. */
export interface ObservedPlumbing extends Plumbing {
  localIps: string[];
}

/** Device tunnels (d), peers (p) and remote access (r). */
const XFRM_NAME = /^xfrm-[dpr]\d+$/;

function sameSlash31(a: string, b: string): boolean {
  const x = parseCidr(`${a}/31`);
  const y = parseCidr(`${b}/31`);
  return x !== null && y !== null && x.network === y.network;
}

/** Local subnets that need a stand-in address for kernel-libipsec: no address of `localIps` inside, room for a network address. */
export function subnetsWithoutAddress(tunnels: ConfigTunnel[], localIps: string[]): string[] {
  const ips = localIps.map(parseIPv4).filter((n): n is number => n !== null);
  const loopbacks = tunnels.map((t) => parseIPv4(t.localLoopback)).filter((n): n is number => n !== null);
  const out = new Set<string>();
  for (const subnet of tunnels.flatMap((t) => t.localSubnets)) {
    const c = parseCidr(subnet);
    if (!c || c.prefix > 30) continue;
    if ([...ips, ...loopbacks].some((ip) => cidrContains(c, ip))) continue;
    out.add(subnet);
  }
  return [...out];
}

/**
 * What the kernel should hold for `tunnels`. `localIps` are the device's own
 * addresses (not the driver's), to see which local subnets have one.
 */
export function desiredPlumbing(tunnels: ConfigTunnel[], dataplane: Dataplane, localIps: string[] = []): Plumbing {
  const p: Plumbing = { links: [], addresses: [], routes: [] };
  for (const t of tunnels) {
    const src = t.localLoopback;
    if (dataplane === "libipsec") {
      p.addresses.push({ dev: "lo", cidr: `${src}/32`, label: LO_LABEL });
      for (const dst of [`${t.remoteLoopback}/32`, ...t.remoteSubnets]) p.routes.push({ dst, dev: LIBIPSEC_DEVICE, src });
    } else {
      const dev = xfrmIfName(t);
      const pair = sameSlash31(t.localLoopback, t.remoteLoopback);
      p.links.push({ name: dev, parent: t.localInterface, ifId: xfrmIfId(t) });
      p.addresses.push({ dev, cidr: `${src}/${pair ? 31 : 32}` });
      for (const dst of [...(pair ? [] : [`${t.remoteLoopback}/32`]), ...t.remoteSubnets]) p.routes.push({ dst, dev, src });
    }
  }
  if (dataplane === "libipsec") {
    for (const subnet of subnetsWithoutAddress(tunnels, localIps)) {
      p.addresses.push({ dev: "lo", cidr: `${subnet.split("/")[0]}/32`, label: LO_LABEL });
    }
  }
  return p;
}

interface IpAddrJson {
  ifname: string;
  link?: string;
  linkinfo?: { info_kind?: string; info_data?: { if_id?: string | number; link?: string; dev?: string } };
  addr_info?: { family?: string; local?: string; prefixlen?: number; label?: string }[];
}
interface IpRouteJson {
  dst: string;
  dev?: string;
  prefsrc?: string;
}

function ifIdOf(v: string | number | undefined): number {
  if (typeof v === "number") return v;
  return v ? Number(v) : 0;
}

/** Parses `ip -j -d addr show` and `ip -j -4 route show table main proto N` into what the driver owns. */
export function parseOwned(addrJson: string, routeJson: string): ObservedPlumbing {
  const links = JSON.parse(addrJson || "[]") as IpAddrJson[];
  const p: ObservedPlumbing = { links: [], addresses: [], routes: [], localIps: [] };
  for (const l of links) {
    const owned = l.linkinfo?.info_kind === "xfrm" && XFRM_NAME.test(l.ifname);
    if (owned) {
      const data = l.linkinfo?.info_data ?? {};
      p.links.push({ name: l.ifname, parent: data.link ?? data.dev ?? l.link ?? null, ifId: ifIdOf(data.if_id) });
    }
    for (const a of l.addr_info ?? []) {
      if (a.family !== "inet" || !a.local) continue;
      if (l.ifname === "lo" && a.label === LO_LABEL)
        p.addresses.push({ dev: "lo", cidr: `${a.local}/${a.prefixlen}`, label: LO_LABEL });
      else if (owned) p.addresses.push({ dev: l.ifname, cidr: `${a.local}/${a.prefixlen}` });
      else p.localIps.push(a.local);
    }
  }
  for (const r of JSON.parse(routeJson || "[]") as IpRouteJson[]) {
    p.routes.push({ dst: r.dst.includes("/") ? r.dst : `${r.dst}/32`, dev: r.dev ?? "", src: r.prefsrc ?? "" });
  }
  return p;
}

/** Reads what the driver owns in the kernel now. */
export async function observePlumbing(runner: Runner): Promise<ObservedPlumbing> {
  const addrs = await runner.run(["ip", "-j", "-d", "addr", "show"]);
  const routes = await runner.run(["ip", "-j", "-4", "route", "show", "table", "main", "proto", String(IKEV2_ROUTE_PROTO)]);
  return parseOwned(addrs.stdout, routes.stdout);
}

/**
 * Commands from `current` to `desired`: `links` (XFRM interfaces and loopback
 * addresses, needed before SAs install) and `routes` (after charon runs, as
 * the libipsec TUN exists only then).
 */
export function plumbingCommands(current: Plumbing, desired: Plumbing): { links: string[][]; routes: string[][] } {
  const links: string[][] = [];
  const key = (l: OwnedLink) => `${l.name}|${l.ifId}`;
  const want = new Map(desired.links.map((l) => [l.name, l]));
  const removed = new Set<string>();
  for (const l of current.links) {
    const d = want.get(l.name);
    if (!d || key(d) !== key(l) || (l.parent !== null && l.parent !== d.parent)) {
      links.push(["ip", "link", "del", l.name]);
      removed.add(l.name);
    }
  }
  const have = new Set(current.links.filter((l) => !removed.has(l.name)).map((l) => l.name));
  for (const l of desired.links) {
    if (have.has(l.name)) continue;
    links.push(["ip", "link", "add", l.name, "type", "xfrm", "dev", l.parent ?? "lo", "if_id", String(l.ifId)]);
    links.push(["ip", "link", "set", l.name, "up"]);
  }
  const addrKey = (a: OwnedAddress) => `${a.dev}|${a.cidr}`;
  const currentAddrs = current.addresses.filter((a) => !removed.has(a.dev));
  const wantAddrs = new Set(desired.addresses.map(addrKey));
  const haveAddrs = new Set(currentAddrs.map(addrKey));
  for (const a of currentAddrs) if (!wantAddrs.has(addrKey(a))) links.push(["ip", "addr", "del", a.cidr, "dev", a.dev]);
  for (const a of desired.addresses) {
    if (!haveAddrs.has(addrKey(a)))
      links.push(["ip", "addr", "add", a.cidr, "dev", a.dev, ...(a.label ? ["label", a.label] : [])]);
  }
  const routes: string[][] = [];
  const proto = String(IKEV2_ROUTE_PROTO);
  const wantRoutes = new Map(desired.routes.map((r) => [r.dst, r]));
  const haveRoutes = new Map(current.routes.map((r) => [r.dst, r]));
  for (const r of current.routes) {
    if (!wantRoutes.has(r.dst)) routes.push(["ip", "route", "del", r.dst, "table", "main", "proto", proto]);
  }
  for (const r of desired.routes) {
    const h = haveRoutes.get(r.dst);
    if (h && h.dev === r.dev && h.src === r.src) continue;
    // No source for remote-access pool routes (src ""): they carry forwarded replies.
    routes.push([
      "ip",
      "route",
      "replace",
      r.dst,
      "dev",
      r.dev,
      ...(r.src ? ["src", r.src] : []),
      "table",
      "main",
      "proto",
      proto,
    ]);
  }
  return { links, routes };
}
