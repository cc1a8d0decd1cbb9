/** Shapes the probes share with the policy driver, the status report and the troubleshooting page. */

/**
 * UDP port of the Tern echo responder (the firewall lets it in on tunnels, QoS
 * prioritises it). Agents now probe device tunnels with ICMP echo; the
 * responder still answers agents of earlier versions during an upgrade.
 */
export const PROBE_PORT = 7655;

/** Measured quality of one link: a tunnel (`tunnel:<id>`) or a WAN interface (`wan:<ifname>`). */
export interface LinkQuality {
  key: string;
  /** An answer came within `downAfterMs`. */
  up: boolean;
  lossPercent: number;
  /** Window mean RTT (the figure `TunnelReport.rtt` carries). */
  rttMs: number;
  /** Smoothed RTT (EWMA, alpha 1/8). */
  srttMs: number;
  /** RFC 3550 interarrival jitter of the RTTs. */
  jitterMs: number;
  samples: number;
  /** Time the loss window covers, ms. */
  windowMs: number;
  /** Lifetime counts of finalised probes to this target (raw counts for the server). */
  sent: number;
  received: number;
  /** Which target the figures come from (the best of a tunnel's targets). */
  target: string;
  /** Milliseconds since the last answer, null when none came yet. */
  sinceLastReplyMs: number | null;
}

/** What the policy driver reads. */
export interface LinkQualityLookup {
  quality(key: string): LinkQuality | null;
  /** Probe settings in force, so the policy loop re-evaluates at the probe rate. */
  intervalMs(): number;
}

export const tunnelKey = (id: string) => `tunnel:${id}`;
export const wanKey = (ifname: string) => `wan:${ifname}`;
