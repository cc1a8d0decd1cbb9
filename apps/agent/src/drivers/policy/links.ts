/** The links a path label stands for: WAN interfaces carrying it (via their gateway) and tunnels carrying it (via the remote loopback). */
import type { ConfigPolicyRule, DeviceConfig } from "@tern/protocol";
import { tunnelKey, wanKey } from "../../probes/types.ts";

export interface PolicyLink {
  key: string;
  label: string;
  /** Next hop of the default route in the rule's table. */
  via: string;
  /** Output device when known (WAN); tunnels resolve theirs from the route to the remote loopback. */
  dev: string | null;
  /** The WAN interface the link leaves by (a tunnel's local interface), for the kernel's carrier and address events. */
  wan?: string | null;
}

export function linksOf(config: DeviceConfig): PolicyLink[] {
  const out: PolicyLink[] = [];
  for (const i of config.interfaces)
    if (i.type === "WAN" && i.gateway)
      for (const label of i.pathLabels) out.push({ key: wanKey(i.name), label, via: i.gateway, dev: i.name, wan: i.name });
  for (const t of config.tunnels)
    if (t.pathLabel)
      out.push({ key: tunnelKey(t.id), label: t.pathLabel, via: t.remoteLoopback, dev: null, wan: t.localInterface });
  return out;
}

/** A rule's candidate links in preference order: its peer tunnels (a `peer` action), or its path labels in order, then config order within a label. */
export function candidates(rule: ConfigPolicyRule, links: readonly PolicyLink[], config?: DeviceConfig): PolicyLink[] {
  if (rule.tunnels) {
    const byId = new Map((config?.tunnels ?? []).map((t) => [t.id, t]));
    return rule.tunnels.flatMap((id) => {
      const t = byId.get(id);
      return t ? [{ key: tunnelKey(t.id), label: "", via: t.remoteLoopback, dev: null }] : [];
    });
  }
  const seen = new Set<string>();
  const out: PolicyLink[] = [];
  for (const label of rule.pathLabels)
    for (const l of links)
      if (l.label === label && !seen.has(l.key)) {
        seen.add(l.key);
        out.push(l);
      }
  return out;
}
