/**
 * The seam between tunnel measurement (src/probes/, `TunnelProber`) and the
 * rest of the agent: `status` messages, `tern-agent status`, the
 * `tunnel-quality` request, the troubleshooting page and the Prometheus
 * gauges all read tunnel figures through this interface.
 */
import type { DeviceConfig, LinkReport, TunnelReport } from "@tern/protocol";
import type { DriverContext } from "../drivers/driver.ts";

export interface TunnelQualitySource {
  /** The latest figures, one per configured tunnel; cheap (called per status message and per scrape). */
  report(): TunnelReport[];
  /**
   * The config now applied, after every successful apply and at start:
   * start, change or stop probes per `config.tunnels` and `config.monitoring`.
   * Use `ctx.notify()` when a tunnel goes up or down so the server hears at once.
   */
  configure?(config: DeviceConfig, ctx: DriverContext): void | Promise<void>;
  /** Extras per tunnel beyond the protocol's report (smoothed RTT, which target), for the local page. */
  details?(): TunnelDetail[];
  /** Quality of the WAN links probed for the multi-link policy (the server keeps baselines of them). */
  links?(): LinkReport[];
  /** Stops probing (agent shutdown). */
  close?(): void;
}

export interface TunnelDetail {
  id: string;
  /** For people: kind, number and far end ("device tunnel 1 → 10.100.2.2"). */
  name: string;
  /** Smoothed RTT (EWMA), ms. */
  srttMs: number;
  /** The probe target the figures come from. */
  target: string;
}

/** No probes: every report is empty. Used until the probes are wired in, and by one-shot commands. */
export const noTunnelQuality: TunnelQualitySource = { report: () => [] };
