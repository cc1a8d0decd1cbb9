/**
 * The multi-link policy installed on the device: enabled rules by priority,
 * path label ids in preference order, or for a `peer` action (cloud security)
 * the device's tunnels to that peer, which are then marked to carry
 * internet-bound traffic (their remote selector adds 0.0.0.0/0).
 */
import { type ConfigPolicyRule, type ConfigTunnel, type DeviceConfig, LinkQualityThresholds } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { compareText } from "./order.ts";

/** This device's compiled tunnels to `peerId`, in tunnel-number order. */
function tunnelsToPeer(ctx: CompileContext, tunnels: ConfigTunnel[], peerId: string): ConfigTunnel[] {
  const ids = new Set(ctx.input.tunnels.filter((t) => t.kind === "peer" && t.peer.id === peerId).map((t) => t.id));
  return tunnels.filter((t) => t.kind === "peer" && ids.has(t.id));
}

export function compilePolicy(ctx: CompileContext, tunnels: ConfigTunnel[] = []): DeviceConfig["policy"] {
  const installed = ctx.input.device.policies.multilink;
  const policy = ctx.input.multiLinkPolicy;
  if (installed === null) return null;
  const subject = { type: "mlpolicy" as const, id: installed };
  if (policy === null || policy.id !== installed) {
    ctx.warn({
      path: "policies.multilink",
      subject,
      message: `multi-link policy ${installed} was not supplied; no policy compiled`,
    });
    return null;
  }
  const rules: ConfigPolicyRule[] = [];
  policy.rules.forEach((rule, index) => {
    if (!rule.enabled) return;
    const path = `multiLinkPolicy.rules.${index}`;
    const common = {
      name: rule.name,
      priority: rule.priority,
      match: { ...rule.match },
      order: rule.action.order,
      fallback: rule.action.fallback,
      linkQuality:
        rule.action.order === "link-quality" ? { ...(rule.action.linkQuality ?? LinkQualityThresholds.parse({})) } : null,
    };
    if (rule.action.peer !== undefined) {
      const toPeer = tunnelsToPeer(ctx, tunnels, rule.action.peer);
      if (toPeer.length === 0) {
        ctx.warn({ path, subject, message: `rule ${rule.name} left out: this device has no tunnel to peer ${rule.action.peer}` });
        return;
      }
      for (const t of toPeer) t.internet = true;
      rules.push({ ...common, pathLabels: [], tunnels: toPeer.map((t) => t.id) });
      return;
    }
    // Order is the preference: keep it, only drop labels that no longer exist.
    const labels = rule.action.pathlabels.filter((id) => ctx.pathLabelIds.has(id));
    if (labels.length < rule.action.pathlabels.length)
      ctx.warn({ path, subject, message: `rule ${rule.name}: path labels that no longer exist were dropped` });
    if (labels.length === 0) {
      ctx.warn({ path, subject, message: `rule ${rule.name} left out: none of its path labels exists` });
      return;
    }
    rules.push({ ...common, pathLabels: [...new Set(labels)] });
  });
  return { rules: rules.sort((a, b) => a.priority - b.priority || compareText(a.name, b.name)) };
}
