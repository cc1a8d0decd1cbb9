/**
 * Firewall: inbound/outbound filter rules only when `deviceSpecificRulesEnabled`,
 * enabled LAN NAT rules always; interface devIds become names.
 */
import type { ConfigFilterRule, ConfigFirewall, FilterRule } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { compareCidr, compareText } from "./order.ts";

export function compileFirewall(ctx: CompileContext): ConfigFirewall {
  const device = ctx.input.device;
  const inbound: ConfigFilterRule[] = [];
  const outbound: ConfigFilterRule[] = [];
  const lanNat: ConfigFirewall["lanNat"] = [];
  device.firewall.rules.forEach((rule, index) => {
    if (!rule.enabled) return;
    const path = `firewall.rules.${index}`;
    if (rule.direction === "lanNat") {
      const iface = ctx.assigned.get(rule.interface);
      if (iface?.type !== "LAN") {
        ctx.warn({ path, message: `LAN NAT rule left out: ${rule.interface} is not an assigned LAN interface` });
        return;
      }
      lanNat.push({ interface: iface.name, source: rule.source, translated: rule.translated });
      return;
    }
    if (!device.deviceSpecificRulesEnabled) return;
    const converted = filterRule(ctx, rule, path);
    if (converted) (rule.direction === "inbound" ? inbound : outbound).push(converted);
  });
  return {
    inbound: byPriority(inbound),
    outbound: byPriority(outbound),
    lanNat: lanNat.sort((a, b) => compareText(a.interface, b.interface) || compareCidr(a.source, b.source)),
  };
}

function filterRule(ctx: CompileContext, rule: FilterRule, path: string): ConfigFilterRule | null {
  let name: string | null = null;
  if (rule.interface !== "") {
    const iface = ctx.assigned.get(rule.interface);
    // Dropping the interface would widen the rule to every interface: leave the rule out instead.
    if (!iface) {
      ctx.warn({ path, message: `firewall rule left out: interface ${rule.interface} is not assigned` });
      return null;
    }
    name = iface.name;
  }
  return {
    priority: rule.priority,
    action: rule.action,
    interface: name,
    protocol: rule.match.protocol,
    source: rule.match.source || null,
    destination: rule.match.destination || null,
    ports: rule.match.ports || null,
  };
}

/** First match wins by priority; among equal priorities the admin's order stays (the sort is stable). */
function byPriority(rules: ConfigFilterRule[]): ConfigFilterRule[] {
  return rules.sort((a, b) => a.priority - b.priority);
}
