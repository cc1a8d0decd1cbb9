/** Pure render of the policy section: the marking table and the kernel rules/routes it implies. */
import type { ConfigPolicyRule, DeviceConfig } from "@tern/protocol";
import { invalidConfig } from "../../errors.ts";
import { DEFAULT_TUNNEL_DEVICES } from "../firewall/input.ts";
import { ifnameSet, network, portSpec } from "../firewall/nft-syntax.ts";
import { hex, MARK_MASK, MAX_RULES, slotMark, slotTable } from "./layout.ts";
import type { PolicyLink } from "./links.ts";

export interface RuleSlot {
  slot: number;
  rule: ConfigPolicyRule;
  mark: number;
  table: number;
}

/** Rules by priority (then config order), each with its slot, mark and table. */
export function ruleSlots(config: DeviceConfig): RuleSlot[] {
  const rules = config.policy?.rules ?? [];
  if (rules.length > MAX_RULES) throw invalidConfig("policy.rules", `at most ${MAX_RULES} rules, got ${rules.length}`);
  const names = new Set<string>();
  rules.forEach((r, i) => {
    if (names.has(r.name)) throw invalidConfig(`policy.rules.${i}.name`, `rule name ${JSON.stringify(r.name)} is used twice`);
    names.add(r.name);
  });
  return rules
    .map((rule, index) => ({ rule, index }))
    .sort((a, b) => a.rule.priority - b.rule.priority || a.index - b.index)
    .map(({ rule }, slot) => ({ slot, rule, mark: slotMark(slot), table: slotTable(slot) }));
}

function matchExpr(rule: ConfigPolicyRule, path: string): string {
  const m = rule.match;
  const parts: string[] = [];
  if (m.source) parts.push(`ip saddr ${network(m.source, `${path}.match.source`)}`);
  if (m.destination) parts.push(`ip daddr ${network(m.destination, `${path}.match.destination`)}`);
  const ports = m.ports ? portSpec(m.ports, `${path}.match.ports`) : null;
  if (m.protocol === "tcp" || m.protocol === "udp")
    parts.push(ports ? `${m.protocol} dport ${ports}` : `meta l4proto ${m.protocol}`);
  else if (m.protocol === "icmp") {
    if (ports) throw invalidConfig(`${path}.match.ports`, "ports make no sense with protocol icmp");
    parts.push("meta l4proto icmp");
  } else if (ports) parts.push(`meta l4proto { tcp, udp } th dport ${ports}`);
  if (m.dscp !== null) parts.push(`ip dscp ${m.dscp}`);
  return parts.join(" ");
}

/**
 * The body of `table inet tern_policy`: traffic arriving on LAN-side devices
 * (not WAN, not tunnels) gets the mark of the first rule it matches. Traffic
 * the router sends itself (control link, probes, IKE) is never steered.
 */
export function renderPolicyTable(slots: readonly RuleSlot[], upstream: readonly string[]): string {
  const keep = `0x${(~MARK_MASK >>> 0).toString(16).padStart(8, "0")}`;
  const lines = [
    "type filter hook prerouting priority mangle; policy accept;",
    `iifname ${ifnameSet([...upstream, ...DEFAULT_TUNNEL_DEVICES], "interfaces")} return`,
    ...slots.map(({ slot, rule, mark }) => {
      const m = matchExpr(rule, `policy.rules.${slot}`);
      const comment = JSON.stringify(`rule ${rule.name}`.replace(/"/g, "'").slice(0, 120));
      return `${m ? `${m} ` : ""}meta mark set meta mark & ${keep} | ${hex(mark)} return comment ${comment}`;
    }),
  ];
  return `  chain prerouting {\n${lines.map((l) => `    ${l}\n`).join("")}  }\n`;
}

/** The one route a slot's table should hold: null = empty table (fall through to main). */
export type SlotRoute = { kind: "via"; via: string; dev: string | null } | { kind: "blackhole" } | null;

export function slotRoute(rule: ConfigPolicyRule, link: PolicyLink | null): SlotRoute {
  if (link) return { kind: "via", via: link.via, dev: link.dev };
  return rule.fallback === "drop" ? { kind: "blackhole" } : null;
}

/** argv that makes `table` hold exactly `route`. */
export function routeArgv(table: number, route: Exclude<SlotRoute, null>): string[] {
  if (route.kind === "blackhole") return ["ip", "route", "replace", "blackhole", "default", "table", String(table)];
  return [
    "ip",
    "route",
    "replace",
    "default",
    "via",
    route.via,
    ...(route.dev ? ["dev", route.dev] : []),
    "table",
    String(table),
  ];
}
