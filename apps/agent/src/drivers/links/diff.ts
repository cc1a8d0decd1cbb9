/**
 * Pure diffs: desired links state × observed system × ownership record →
 * the ordered actions that bring the system there, and the argv of each.
 * Only owned things are ever removed: addresses from the ownership record,
 * routes carrying ROUTE_PROTO, MTUs with a recorded original.
 */
import type { DesiredLinks, DesiredRoute } from "./desired.ts";
import { routeKey } from "./desired.ts";
import { type DhcpClientPaths, dhclientStartArgv, dhclientStopArgv } from "./dhcp-client.ts";
import { commandDst, type ObservedLink, type ObservedRoute, ROUTE_PROTO } from "./iproute.ts";
import type { OwnedLinks } from "./owned.ts";

export type LinkAction =
  | { kind: "dhcp-stop"; dev: string }
  | { kind: "addr-del"; dev: string; cidr: string }
  /** `original` is the MTU to record before the first change (null when restoring it). */
  | { kind: "mtu"; dev: string; mtu: number; original: number | null }
  | { kind: "up"; dev: string }
  | { kind: "addr-add"; dev: string; cidr: string }
  | { kind: "dhcp-start"; dev: string };

export type RouteAction =
  | { kind: "route-del"; route: ObservedRoute }
  | { kind: "route-replace"; route: DesiredRoute }
  | { kind: "route-add"; route: DesiredRoute };

export interface LinkSystem {
  links: ObservedLink[];
  /** Interfaces with a live agent-started dhclient. */
  dhcpRunning: string[];
}

/** Drops ownership entries for things that are gone from the system (an interface removed, an address deleted by hand). */
export function pruneOwned(owned: OwnedLinks, system: LinkSystem): OwnedLinks {
  const byName = new Map(system.links.map((l) => [l.name, l]));
  return {
    version: 1,
    addresses: owned.addresses.filter((a) => byName.get(a.dev)?.addresses.some((x) => x.cidr === a.cidr) ?? false),
    mtu: Object.fromEntries(Object.entries(owned.mtu).filter(([dev]) => byName.has(dev))),
  };
}

/** Actions for interfaces, addresses and DHCP clients, in the order they must run. */
export function diffLinks(desired: DesiredLinks, system: LinkSystem, owned: OwnedLinks): LinkAction[] {
  const byName = new Map(system.links.map((l) => [l.name, l]));
  const want = new Map(desired.links.map((l) => [l.name, l]));
  const actions: LinkAction[] = [];

  for (const dev of system.dhcpRunning) if (!want.get(dev)?.dhcp) actions.push({ kind: "dhcp-stop", dev });

  // Remove before adding: moving an interface to another address in the same
  // subnet must not leave the new one as a secondary that dies with the old primary.
  for (const a of owned.addresses) {
    const present = byName.get(a.dev)?.addresses.some((x) => x.cidr === a.cidr) ?? false;
    if (present && !(want.get(a.dev)?.addresses.includes(a.cidr) ?? false)) actions.push({ kind: "addr-del", ...a });
  }

  for (const l of desired.links) {
    const sys = byName.get(l.name);
    if (!sys) continue;
    if (sys.mtu !== l.mtu) actions.push({ kind: "mtu", dev: l.name, mtu: l.mtu, original: owned.mtu[l.name] ?? sys.mtu });
    if (!sys.adminUp) actions.push({ kind: "up", dev: l.name });
  }
  for (const [dev, original] of Object.entries(owned.mtu)) {
    const sys = byName.get(dev);
    if (!want.has(dev) && sys && sys.mtu !== original) actions.push({ kind: "mtu", dev, mtu: original, original: null });
  }

  for (const l of desired.links) {
    const sys = byName.get(l.name);
    for (const cidr of l.addresses)
      if (!sys?.addresses.some((x) => x.cidr === cidr)) actions.push({ kind: "addr-add", dev: l.name, cidr });
  }

  const running = new Set(system.dhcpRunning);
  for (const l of desired.links) if (l.dhcp && !running.has(l.name)) actions.push({ kind: "dhcp-start", dev: l.name });
  return actions;
}

/** Actions for routes: the owned routes observed (`proto ROUTE_PROTO`) against the desired ones. */
export function diffRoutes(desired: DesiredRoute[], ownedRoutes: ObservedRoute[]): RouteAction[] {
  const want = new Map(desired.map((r) => [routeKey(r), r]));
  const have = new Map<string, ObservedRoute>();
  const dels: RouteAction[] = [];
  for (const r of ownedRoutes) {
    const key = routeKey(r);
    if (!want.has(key) || have.has(key)) dels.push({ kind: "route-del", route: r });
    else have.set(key, r);
  }
  const changes: RouteAction[] = [];
  for (const [key, r] of want) {
    const cur = have.get(key);
    if (!cur) changes.push({ kind: "route-add", route: r });
    else if (cur.gateway !== r.gateway || (r.dev !== null && cur.dev !== r.dev))
      changes.push({ kind: "route-replace", route: r });
  }
  return [...dels, ...changes];
}

function routeArgv(verb: "add" | "replace", r: DesiredRoute): string[] {
  return [
    "ip",
    "route",
    verb,
    commandDst(r.dst),
    "via",
    r.gateway,
    ...(r.dev !== null ? ["dev", r.dev] : []),
    "metric",
    String(r.metric),
    "proto",
    String(ROUTE_PROTO),
  ];
}

/** The command that carries out one action. */
export function actionArgv(a: LinkAction | RouteAction, dhcp: DhcpClientPaths): string[] {
  switch (a.kind) {
    case "dhcp-stop":
      return dhclientStopArgv(dhcp, a.dev);
    case "dhcp-start":
      return dhclientStartArgv(dhcp, a.dev);
    case "addr-del":
      return ["ip", "addr", "del", a.cidr, "dev", a.dev];
    case "addr-add":
      return ["ip", "addr", "add", a.cidr, "dev", a.dev];
    case "mtu":
      return ["ip", "link", "set", "dev", a.dev, "mtu", String(a.mtu)];
    case "up":
      return ["ip", "link", "set", "dev", a.dev, "up"];
    case "route-add":
      return routeArgv("add", a.route);
    case "route-replace":
      return routeArgv("replace", a.route);
    case "route-del": {
      const r = a.route;
      return [
        "ip",
        "route",
        "del",
        commandDst(r.dst),
        ...(r.gateway !== null ? ["via", r.gateway] : []),
        "dev",
        r.dev,
        "metric",
        String(r.metric),
        "proto",
        String(ROUTE_PROTO),
      ];
    }
  }
}
