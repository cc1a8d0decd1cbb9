/**
 * Prometheus metrics of the agent itself (prom-client, its own registry so
 * several agents can live in one test process): apply durations and errors
 * per driver, apply outcomes, control-link state and reconnects, and tunnel
 * quality gauges read from the TunnelQualitySource at scrape time.
 */
import type { DriverResult } from "@tern/protocol";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ReconcileObserver, ReconcileOutcome } from "../reconcile/index.ts";
import type { TunnelQualitySource } from "../status/tunnel-quality.ts";

export class AgentMetrics implements ReconcileObserver {
  readonly registry = new Registry();
  private readonly driverDuration = new Histogram({
    name: "tern_agent_driver_apply_duration_seconds",
    help: "Time one driver took to apply a config",
    labelNames: ["driver"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly driverErrors = new Counter({
    name: "tern_agent_driver_errors_total",
    help: "Driver applies that failed",
    labelNames: ["driver"],
    registers: [this.registry],
  });
  private readonly applies = new Counter({
    name: "tern_agent_applies_total",
    help: "Config applies by result (ok, rolled_back, failed, refused, superseded)",
    labelNames: ["result"],
    registers: [this.registry],
  });
  private readonly applyDuration = new Histogram({
    name: "tern_agent_apply_duration_seconds",
    help: "Time a whole apply took, rollback included",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly connected = new Gauge({
    name: "tern_agent_connected",
    help: "1 while the control link to the server is up (welcome received)",
    registers: [this.registry],
  });
  private readonly reconnects = new Counter({
    name: "tern_agent_reconnects_total",
    help: "Connection attempts after the first",
    registers: [this.registry],
  });

  constructor(tunnels: TunnelQualitySource, options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: "tern_agent_" });
    const perTunnel = (name: string, help: string, pick: (t: ReturnType<TunnelQualitySource["report"]>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["tunnel"],
        registers: [this.registry],
        collect() {
          this.reset();
          for (const t of tunnels.report()) this.set({ tunnel: t.id }, pick(t));
        },
      });
    perTunnel("tern_agent_tunnel_up", "1 when the tunnel answers probes", (t) => (t.up ? 1 : 0));
    perTunnel("tern_agent_tunnel_loss_percent", "Probe loss over the window", (t) => t.loss);
    perTunnel("tern_agent_tunnel_rtt_milliseconds", "Probe round-trip time", (t) => t.rtt);
    perTunnel("tern_agent_tunnel_jitter_milliseconds", "Probe round-trip jitter", (t) => t.jitter);
  }

  driverFinished(result: DriverResult): void {
    this.driverDuration.observe({ driver: result.driver }, result.durationMs / 1000);
    if (!result.ok) this.driverErrors.inc({ driver: result.driver });
  }

  applyFinished(outcome: ReconcileOutcome): void {
    const result = outcome.ok
      ? "ok"
      : outcome.superseded
        ? "superseded"
        : outcome.rolledBack
          ? "rolled_back"
          : outcome.drivers.length === 0
            ? "refused"
            : "failed";
    this.applies.inc({ result });
    const ms = Date.parse(outcome.finishedAt) - Date.parse(outcome.startedAt);
    if (Number.isFinite(ms) && outcome.drivers.length > 0) this.applyDuration.observe(ms / 1000);
  }

  setConnected(up: boolean): void {
    this.connected.set(up ? 1 : 0);
  }

  reconnecting(): void {
    this.reconnects.inc();
  }
}
