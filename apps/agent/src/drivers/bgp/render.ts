/**
 * Pure rendering of FRR configuration from the BGP section, in the form FRR
 * itself prints back (`show running-config`), so frr-reload.py finds no
 * difference when nothing changed. Golden-tested.
 */
import type { ConfigBgp } from "@tern/protocol";

/** Hostname of the FRR instance; the same in vtysh.conf, so vtysh and the daemons agree and reloads stay clean. */
export const FRR_HOSTNAME = "tern";
/** Seconds between connection attempts to an idle neighbor (FRR's default is 120). */
export const CONNECT_RETRY = 5;

/** eBGP to a neighbor that is not directly connected, or iBGP: next hops are resolved over the default route. */
export function needsNhtViaDefault(bgp: ConfigBgp): boolean {
  return bgp.neighbors.some((n) => n.remoteAsn === bgp.asn || n.multiHop > 1);
}

/** The `router bgp` block. */
export function renderRouterBgp(bgp: ConfigBgp): string[] {
  const lines = [
    `router bgp ${bgp.asn}`,
    ` bgp router-id ${bgp.routerId}`,
    " no bgp ebgp-requires-policy",
    ` timers bgp ${bgp.keepalive} ${bgp.hold}`,
  ];
  for (const n of bgp.neighbors) {
    lines.push(` neighbor ${n.ip} remote-as ${n.remoteAsn}`);
    if (n.password) lines.push(` neighbor ${n.ip} password ${n.password}`);
    if (n.remoteAsn !== bgp.asn && n.multiHop > 1) lines.push(` neighbor ${n.ip} ebgp-multihop ${n.multiHop}`);
    lines.push(` neighbor ${n.ip} timers connect ${CONNECT_RETRY}`);
  }
  lines.push(" !", " address-family ipv4 unicast");
  for (const net of bgp.networks) lines.push(`  network ${net}`);
  for (const n of bgp.neighbors) if (!n.sendCommunity) lines.push(`  no neighbor ${n.ip} send-community`);
  lines.push(" exit-address-family", "exit");
  return lines;
}

const text = (lines: string[]) => `${lines.join("\n")}\n`;

/** Standalone zebra.conf: zebra's part (next-hop tracking over the default route when needed). */
export function renderZebraConf(bgp: ConfigBgp): string {
  return text([
    "! Rendered by tern-agent (bgp): zebra of this agent's FRR instance.",
    `hostname ${FRR_HOSTNAME}`,
    ...(needsNhtViaDefault(bgp) ? ["ip nht resolve-via-default"] : []),
    "!",
  ]);
}

/** Standalone bgpd.conf: read by bgpd at start and reconciled with `frr-reload.py --daemon bgpd`. */
export function renderBgpdConf(bgp: ConfigBgp): string {
  return text([
    "! Rendered by tern-agent (bgp): bgpd of this agent's FRR instance.",
    `hostname ${FRR_HOSTNAME}`,
    "!",
    ...renderRouterBgp(bgp),
    "!",
  ]);
}

export function renderVtyshConf(): string {
  return text(["! Rendered by tern-agent (bgp).", `hostname ${FRR_HOSTNAME}`]);
}

/** System mode: the integrated /etc/frr/frr.conf that `systemctl reload frr` (frr-reload.py) applies. */
export function renderIntegratedConf(bgp: ConfigBgp): string {
  return text([
    "! Rendered by tern-agent (bgp); do not edit: the agent owns this file.",
    "frr defaults traditional",
    `hostname ${FRR_HOSTNAME}`,
    "log syslog informational",
    "service integrated-vtysh-config",
    ...(needsNhtViaDefault(bgp) ? ["ip nht resolve-via-default"] : []),
    "!",
    ...renderRouterBgp(bgp),
    "!",
  ]);
}

/** /etc/frr/daemons with bgpd switched on (or off); other lines kept. */
export function withBgpd(daemons: string, on: boolean): string {
  const line = `bgpd=${on ? "yes" : "no"}`;
  return /^bgpd=.*$/m.test(daemons) ? daemons.replace(/^bgpd=.*$/m, line) : `${daemons.trimEnd()}\n${line}\n`;
}

/** Session lines (` neighbor IP …` directly under `router bgp`) per neighbor in a rendered config. */
function sessionLines(conf: string): Map<string, string> {
  const out = new Map<string, string[]>();
  for (const line of conf.split("\n")) {
    const m = /^ neighbor (\S+) /.exec(line);
    if (m?.[1]) out.set(m[1], [...(out.get(m[1]) ?? []), line]);
  }
  return new Map([...out].map(([ip, lines]) => [ip, lines.sort().join("\n")]));
}

/**
 * Neighbors present before and after whose session settings (remote AS,
 * password, multihop, timers) changed: FRR applies those on the next
 * connection, so the driver resets them to not wait for connect-retry.
 */
export function neighborsToReset(before: string | null, after: string): string[] {
  if (before === null) return [];
  const old = sessionLines(before);
  return [...sessionLines(after)].filter(([ip, lines]) => old.has(ip) && old.get(ip) !== lines).map(([ip]) => ip);
}
