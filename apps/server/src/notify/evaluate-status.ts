/**
 * One status message judged against the organization's rules, without I/O:
 * an observation per condition the status says something about. The engine
 * feeds each to its condition state (conditions.ts).
 *
 * | Event | Per | Bad when |
 * |---|---|---|
 * | tunnel-connection | tunnel end | the end reports the tunnel down (confirmed) |
 * | tunnel-rtt, tunnel-drop-rate | tunnel end | RTT / loss of an up tunnel over the tunnel's own thresholds, else the rule's |
 * | link-rtt, link-drop-rate | WAN interface | the best RTT / loss among the up tunnels leaving it over the rule's thresholds (every path through the link is bad, not one far end) |
 * | interface-down | assigned interface | reported operationally down (confirmed) |
 * | missing-interface-ip | assigned interface | up but without an IPv4 address (confirmed) |
 * | bgp-neighbor-down | configured neighbor | not Established, or not reported (confirmed) |
 * | device-memory-usage, hard-drive-usage | device | health figures over the rule's thresholds |
 *
 * A rule that is disabled turns bad observations into `hold`: nothing new is
 * raised, and what is open still resolves when it clears.
 *
 * Tunnel and link loss and RTT from agents that report their raw probe
 * counts (`sent`, issue 17) are judged on evidence (evidence.ts: a window
 * still filling up has a wide interval and holds) and marked `sustained`: the
 * engine raises and resolves them only after they held for the sustain
 * period. Reports without counts (earlier agents): the plain thresholds, at once.
 */
import type { NotificationEvent, Severity, Status, TunnelReport } from "@tern/protocol";
import { type NotificationCondition, notificationDedupKey } from "../services/notifications/events.ts";
import type { FullRules } from "../services/notifications/settings.ts";
import { type Observed, type Thresholds, thresholdLevel } from "./conditions.ts";
import type { DeviceContext } from "./device-context.ts";
import { lossEvidenceLevel, MIN_EVIDENCE_SAMPLES, rttEvidenceLevel } from "./evidence.ts";

export interface Observation {
  /** The condition's dedup key (notificationDedupKey), made when first read. */
  readonly key: string;
  readonly condition: NotificationCondition;
  observed: Observed;
  /** Bad observations in a row before the condition is raised. */
  readonly raiseAfter: number;
  /** Judged on evidence: raise and resolve only once held for the sustain period. */
  readonly sustained: boolean;
  /** The notification's text, made only when one is raised (most statuses raise nothing). */
  readonly details: () => string;
}

/**
 * An observation whose key is made when read: a device without open conditions reads only the keys
 * of what is bad (the engine looks up and starts conditions by key), so a healthy status builds none.
 */
class StatusObservation implements Observation {
  #key: string | undefined;

  constructor(
    readonly condition: NotificationCondition,
    public observed: Observed,
    readonly raiseAfter: number,
    readonly sustained: boolean,
    readonly details: () => string,
    key?: string,
  ) {
    this.#key = key;
  }

  get key(): string {
    if (this.#key === undefined) this.#key = notificationDedupKey(this.condition);
    return this.#key;
  }
}

/** A measured figure, the probes behind it (answered ones for RTT), and whether to judge it on evidence. */
interface Figure {
  value: number;
  samples: number;
  evidence: boolean;
}

export interface EvaluateInput {
  context: DeviceContext;
  rules: FullRules;
  tunnels: (TunnelReport & { side: "a" | "b" })[];
  status: Pick<Status, "interfaces" | "bgp" | "health">;
  /** The open severity of a condition (by dedup key), for hysteresis; absent: nothing is open. */
  openOf?(key: string): Severity | "ok";
  /** Confirmations of up/down states. */
  confirmReports: number;
}

/** Events judged from status messages (their open notifications are tracked per link). */
export const STATUS_EVENTS: readonly NotificationEvent[] = [
  "tunnel-connection",
  "tunnel-rtt",
  "tunnel-drop-rate",
  "link-rtt",
  "link-drop-rate",
  "interface-down",
  "missing-interface-ip",
  "bgp-neighbor-down",
  "device-memory-usage",
  "hard-drive-usage",
];

const fmt = (n: number) => String(Math.round(n * 10) / 10);

function ruleThresholds(rules: FullRules, event: NotificationEvent): Thresholds {
  return { warning: rules[event].warningThreshold, critical: rules[event].criticalThreshold };
}

function describeThresholds(t: Thresholds, unit: string): string {
  const parts = [
    t.warning !== null ? `warning ${fmt(t.warning)}${unit}` : "",
    t.critical !== null ? `critical ${fmt(t.critical)}${unit}` : "",
  ];
  return parts.filter(Boolean).join(", ");
}

export function evaluateStatus(input: EvaluateInput): Observation[] {
  const { context, rules, confirmReports } = input;
  const out: Observation[] = [];
  const deviceId = context.deviceId;

  const push = (
    eventType: NotificationEvent,
    targets: NotificationCondition["targets"],
    observed: Observed,
    raiseAfter: number,
    details: () => string,
    sustained = false,
    key?: string,
  ) => {
    const condition = { eventType, targets: { deviceId, ...targets } };
    const bad = observed !== "ok" && observed !== "hold";
    out.push(
      new StatusObservation(condition, bad && !rules[eventType].enabled ? "hold" : observed, raiseAfter, sustained, details, key),
    );
  };
  const threshold = (
    eventType: NotificationEvent,
    targets: NotificationCondition["targets"],
    value: number | null,
    t: Thresholds,
    what: () => string,
    unit: string,
  ) => {
    // Hysteresis reads the open severity: only a device with open conditions needs the key for it.
    const { openOf } = input;
    const key = openOf ? notificationDedupKey({ eventType, targets: { deviceId, ...targets } }) : undefined;
    const observed = value === null ? "hold" : thresholdLevel(value, t, openOf && key ? openOf(key) : "ok");
    push(
      eventType,
      targets,
      observed,
      1,
      () => `${what()} ${value === null ? "?" : fmt(value)}${unit} (${describeThresholds(t, unit)})`,
      false,
      key,
    );
  };
  /** Loss or RTT of a tunnel or link: on evidence when enough probes stand behind it. */
  const measured = (
    eventType: NotificationEvent,
    targets: NotificationCondition["targets"],
    figure: Figure | null,
    t: Thresholds,
    what: () => string,
    unit: string,
  ) => {
    if (figure === null || !figure.evidence) {
      threshold(eventType, targets, figure?.value ?? null, t, what, unit);
      return;
    }
    const loss = unit === " %";
    const observed = loss
      ? lossEvidenceLevel(figure.value, figure.samples, t)
      : figure.samples < MIN_EVIDENCE_SAMPLES
        ? "hold"
        : rttEvidenceLevel(figure.value, t);
    const over = loss ? ` over ${figure.samples} probes` : "";
    push(
      eventType,
      targets,
      observed,
      1,
      () => `${what()} ${fmt(figure.value)}${unit}${over} (${describeThresholds(t, unit)})`,
      true,
    );
  };

  // Tunnel ends.
  const byInterface = new Map<string, { rtt: Figure[]; loss: Figure[]; tunnels: number }>();
  for (const report of input.tunnels) {
    const tunnel = context.tunnels.get(report.id);
    if (!tunnel) continue;
    const targets = { tunnelId: tunnel.id };
    const name = () => `tunnel ${tunnel.num} to ${tunnel.farName}`;
    push(
      "tunnel-connection",
      targets,
      report.up ? "ok" : rules["tunnel-connection"].severity,
      confirmReports,
      () => `${name()} is down, as reported by ${context.name}`,
    );
    const isMeasured = report.up && report.samples > 0;
    const evidence = report.sent !== undefined;
    const lossFigure = isMeasured ? { value: report.loss, samples: report.samples, evidence } : null;
    const answered = Math.round(report.samples * (1 - report.loss / 100));
    const rttFigure = isMeasured ? { value: report.rtt, samples: answered, evidence } : null;
    const rtt = tunnel.thresholds.rtt ?? ruleThresholds(rules, "tunnel-rtt");
    measured("tunnel-rtt", targets, rttFigure, rtt, () => `${name()}: round-trip time`, " ms");
    const drop = tunnel.thresholds.dropRate ?? ruleThresholds(rules, "tunnel-drop-rate");
    measured("tunnel-drop-rate", targets, lossFigure, drop, () => `${name()}: drop rate`, " %");

    const link = byInterface.get(tunnel.localInterfaceId) ?? { rtt: [], loss: [], tunnels: 0 };
    link.tunnels++;
    if (lossFigure && rttFigure) {
      link.rtt.push(rttFigure);
      link.loss.push(lossFigure);
    }
    byInterface.set(tunnel.localInterfaceId, link);
  }

  // WAN links, judged by the best path through them.
  for (const [interfaceId, link] of byInterface) {
    const iface = context.interfaces.find((i) => i.id === interfaceId);
    const name = () => `link ${iface?.name ?? interfaceId} of ${context.name}`;
    const best = (xs: Figure[]) => xs.reduce<Figure | null>((b, x) => (b === null || x.value < b.value ? x : b), null);
    measured(
      "link-rtt",
      { interfaceId },
      best(link.rtt),
      ruleThresholds(rules, "link-rtt"),
      () => `${name()}: best round-trip time`,
      " ms",
    );
    measured(
      "link-drop-rate",
      { interfaceId },
      best(link.loss),
      ruleThresholds(rules, "link-drop-rate"),
      () => `${name()}: lowest drop rate`,
      " %",
    );
  }

  // Assigned interfaces.
  for (const iface of context.interfaces) {
    const state = input.status.interfaces.find((i) => i.devId === iface.devId);
    if (!state) continue;
    const targets = { interfaceId: iface.id };
    const down = state.operState === "down";
    push(
      "interface-down",
      targets,
      state.operState === "unknown" ? "hold" : down ? rules["interface-down"].severity : "ok",
      confirmReports,
      () => `interface ${iface.name} (${iface.type}) of ${context.name} is down`,
    );
    push(
      "missing-interface-ip",
      targets,
      down ? "hold" : state.IPv4 === "" ? rules["missing-interface-ip"].severity : "ok",
      confirmReports,
      () => `interface ${iface.name} (${iface.type}) of ${context.name} has no IPv4 address`,
    );
  }

  // Configured BGP neighbors.
  for (const n of context.bgpNeighbors) {
    const reported = input.status.bgp?.neighbors.find((x) => x.ip === n.ip);
    const state = reported?.state ?? (input.status.bgp?.running ? "not reported" : "BGP not running");
    push(
      "bgp-neighbor-down",
      { bgpNeighbor: n.ip },
      state === "Established" ? "ok" : rules["bgp-neighbor-down"].severity,
      confirmReports,
      () => `BGP neighbor ${n.ip} (AS ${n.remoteASN}) of ${context.name} is ${state}`,
    );
  }

  // Health.
  const health = input.status.health;
  if (health) {
    threshold(
      "device-memory-usage",
      {},
      health.memoryPercent,
      ruleThresholds(rules, "device-memory-usage"),
      () => `memory usage of ${context.name}`,
      " %",
    );
    threshold(
      "hard-drive-usage",
      {},
      health.diskPercent,
      ruleThresholds(rules, "hard-drive-usage"),
      () => `disk usage of ${context.name}`,
      " %",
    );
  }
  return out;
}
