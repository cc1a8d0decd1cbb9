/** Pure helpers of the notification configuration form. */
import type { Schemas } from "@tern/client";

export type Rules = Schemas["NotificationsConf"]["rules"];
export type EventType = keyof Rules;
export type Rule = NonNullable<Rules[EventType]>;

/** The rules in a stable order (the API's), each event present even when the server left it to its defaults. */
export function ruleRows(rules: Rules, order: readonly EventType[]): { event: EventType; rule: Rule }[] {
  return order.map((event) => ({ event, rule: rules[event] ?? {} }));
}

/** E-mail recipients typed one per line or separated by commas/spaces; blanks and repeats dropped. */
export function parseRecipients(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,;]+/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

/** The tunnel thresholds of the rules, as PUT /api/tunnels/notifications takes them (only those set). */
export function tunnelThresholds(rules: Rules): {
  rtt?: { warning: number; critical: number };
  dropRate?: { warning: number; critical: number };
} {
  const pair = (rule: Rule | undefined) =>
    rule && typeof rule.warningThreshold === "number" && typeof rule.criticalThreshold === "number"
      ? { warning: rule.warningThreshold, critical: rule.criticalThreshold }
      : undefined;
  const rtt = pair(rules["tunnel-rtt"]);
  const dropRate = pair(rules["tunnel-drop-rate"]);
  return { ...(rtt ? { rtt } : {}), ...(dropRate ? { dropRate } : {}) };
}
