/** The multi-link policy installed on the device: enabled rules by priority, path label ids in preference order. */
import { type ConfigPolicyRule, type DeviceConfig, LinkQualityThresholds } from "@tern/protocol";
import type { CompileContext } from "./context.ts";
import { compareText } from "./order.ts";

export function compilePolicy(ctx: CompileContext): DeviceConfig["policy"] {
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
    // Order is the preference: keep it, only drop labels that no longer exist.
    const labels = rule.action.pathlabels.filter((id) => ctx.pathLabelIds.has(id));
    if (labels.length < rule.action.pathlabels.length)
      ctx.warn({ path, subject, message: `rule ${rule.name}: path labels that no longer exist were dropped` });
    if (labels.length === 0) {
      ctx.warn({ path, subject, message: `rule ${rule.name} left out: none of its path labels exists` });
      return;
    }
    rules.push({
      name: rule.name,
      priority: rule.priority,
      match: { ...rule.match },
      order: rule.action.order,
      pathLabels: [...new Set(labels)],
      fallback: rule.action.fallback,
      linkQuality:
        rule.action.order === "link-quality" ? { ...(rule.action.linkQuality ?? LinkQualityThresholds.parse({})) } : null,
    });
  });
  return { rules: rules.sort((a, b) => a.priority - b.priority || compareText(a.name, b.name)) };
}
