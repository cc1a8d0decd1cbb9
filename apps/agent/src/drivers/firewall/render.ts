/**
 * Pure render of the firewall section into the body of `table inet tern`.
 *
 * Layout (docs/agent-network.md):
 * - `input`: must-pass accepts first (established/related, loopback, ICMP echo
 *   whatever its identifier, IKE/ESP on WAN, DHCP client replies, BGP from
 *   neighbours, probes on tunnel devices), then the inbound rules by priority.
 * - `forward`: established/related, then inbound (by `iifname`) and outbound
 *   (by `oifname`) rules by priority.
 * - `nat_post` / `nat_pre`: LAN 1:1 NAT as prefix maps on the tunnel side.
 * Policies stay `accept`: a rule set is what the admin wrote, and a deny-all
 * is a rule they add, which the must-pass lines keep from cutting the
 * control link, tunnels and routing.
 */
import type { ConfigFilterRule } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";
import type { FirewallInput } from "./input.ts";
import { address, ifnameSet, network, portSpec, prefixLength } from "./nft-syntax.ts";

export const FIREWALL_TABLE = { family: "inet", name: "tern" } as const;

type Direction = "inbound" | "outbound";

function byPriority(rules: readonly ConfigFilterRule[]): { rule: ConfigFilterRule; index: number }[] {
  return rules.map((rule, index) => ({ rule, index })).sort((a, b) => a.rule.priority - b.rule.priority || a.index - b.index);
}

/** One filter rule as an nft rule line, or null when it can match nothing (no interface of its direction). */
export function filterRuleLine(
  rule: ConfigFilterRule,
  direction: Direction,
  wans: readonly string[],
  path: string,
): string | null {
  const parts: string[] = [];
  const key = direction === "inbound" ? "iifname" : "oifname";
  if (rule.interface !== null) parts.push(`${key} ${ifnameSet([rule.interface], `${path}.interface`)}`);
  else if (wans.length > 0) parts.push(`${key} ${ifnameSet(wans, `${path}.interface`)}`);
  else return null;
  if (rule.source !== null) parts.push(`ip saddr ${network(rule.source, `${path}.source`)}`);
  if (rule.destination !== null) parts.push(`ip daddr ${network(rule.destination, `${path}.destination`)}`);
  const ports = rule.ports === null || rule.ports.trim() === "" ? null : portSpec(rule.ports, `${path}.ports`);
  switch (rule.protocol) {
    case "tcp":
    case "udp":
      parts.push(ports ? `${rule.protocol} dport ${ports}` : `meta l4proto ${rule.protocol}`);
      break;
    case "icmp":
      if (ports) throw invalidConfig(`${path}.ports`, "ports make no sense with protocol icmp");
      parts.push("meta l4proto icmp");
      break;
    case "any":
      if (ports) parts.push(`meta l4proto { tcp, udp } th dport ${ports}`);
      break;
  }
  parts.push(rule.action === "allow" ? "accept" : "drop");
  parts.push(`comment "${direction} priority ${rule.priority}"`);
  return parts.join(" ");
}

function userRules(rules: readonly ConfigFilterRule[], direction: Direction, wans: readonly string[]): string[] {
  const out: string[] = [];
  for (const { rule, index } of byPriority(rules)) {
    const line = filterRuleLine(rule, direction, wans, `firewall.${direction}.${index}`);
    out.push(line ?? `# ${direction} priority ${rule.priority}: no WAN interface to apply it to`);
  }
  return out;
}

function mustPassInput(input: FirewallInput): string[] {
  const lines = [
    "ct state established,related accept",
    'iifname "lo" accept',
    'icmp type echo-request accept comment "answer pings whatever their identifier"',
    'udp sport 67 udp dport 68 accept comment "DHCP client"',
  ];
  if (input.hasTunnels && input.wanInterfaces.length > 0) {
    const wans = ifnameSet(input.wanInterfaces, "interfaces");
    lines.push(`iifname ${wans} udp dport { 500, 4500 } accept comment "IKE"`);
    lines.push(`iifname ${wans} meta l4proto esp accept comment "ESP"`);
  }
  if (input.hasTunnels && input.tunnelDevices.length > 0)
    lines.push(
      `iifname ${ifnameSet(input.tunnelDevices, "tunnelDevices")} udp dport ${input.probePort} accept comment "tunnel probes"`,
    );
  if (input.bgpNeighbors.length > 0) {
    const ips = [...new Set(input.bgpNeighbors.map((ip, i) => address(ip, `bgp.neighbors.${i}.ip`)))];
    lines.push(`ip saddr ${ips.length === 1 ? ips[0] : `{ ${ips.join(", ")} }`} tcp dport 179 accept comment "BGP"`);
  }
  return lines;
}

function natMaps(input: FirewallInput): { snat: string[]; dnat: string[] } {
  const snat: string[] = [];
  const dnat: string[] = [];
  const seenSource = new Set<string>();
  const seenTranslated = new Set<string>();
  input.lanNat.forEach((n, i) => {
    const path = `firewall.lanNat.${i}`;
    const source = network(n.source, `${path}.source`);
    const translated = network(n.translated, `${path}.translated`);
    if (prefixLength(source) !== prefixLength(translated))
      throw invalidConfig(path, `1:1 NAT needs prefixes of the same size (${source} → ${translated})`);
    if (seenSource.has(source)) throw invalidConfig(`${path}.source`, `${source} is translated twice`);
    if (seenTranslated.has(translated)) throw invalidConfig(`${path}.translated`, `${translated} is used twice`);
    seenSource.add(source);
    seenTranslated.add(translated);
    snat.push(`${source} : ${translated}`);
    dnat.push(`${translated} : ${source}`);
  });
  return { snat, dnat };
}

const indent = (lines: readonly string[]) => lines.map((l) => `    ${l}\n`).join("");

/** The body of `table inet tern` for `input`. Throws INVALID_CONFIG (AgentError) on values that cannot be rendered. */
export function renderFirewall(input: FirewallInput): string {
  const inbound = userRules(input.inbound, "inbound", input.wanInterfaces);
  const outbound = userRules(input.outbound, "outbound", input.wanInterfaces);
  let body = "";
  body += "  chain input {\n    type filter hook input priority filter; policy accept;\n";
  body += indent([...mustPassInput(input), ...inbound]);
  body += "  }\n";
  body += "  chain forward {\n    type filter hook forward priority filter; policy accept;\n";
  body += indent(["ct state established,related accept", ...inbound, ...outbound]);
  body += "  }\n";
  if (input.lanNat.length > 0) {
    const { snat, dnat } = natMaps(input);
    // LAN NAT translates on the tunnel side: without tunnels there is nothing to translate (yet).
    if (input.tunnelDevices.length === 0) return `${body}  # LAN 1:1 NAT waits for a tunnel device\n`;
    const tun = ifnameSet(input.tunnelDevices, "tunnelDevices");
    body += "  chain nat_post {\n    type nat hook postrouting priority srcnat; policy accept;\n";
    body += indent([`oifname ${tun} snat ip prefix to ip saddr map { ${snat.join(", ")} }`]);
    body += "  }\n";
    body += "  chain nat_pre {\n    type nat hook prerouting priority dstnat; policy accept;\n";
    body += indent([`iifname ${tun} dnat ip prefix to ip daddr map { ${dnat.join(", ")} }`]);
    body += "  }\n";
  }
  return body;
}
