/**
 * The server's Prometheus metrics, one registry per server instance (tests run
 * several servers in one process). Counters of other parts (notifications)
 * live here too so every metric is declared in one place.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export type WsErrorKind =
  | "unauthenticated"
  | "not-approved"
  | "bad-path"
  | "not-json"
  | "invalid"
  | "oversized"
  | "rate-limited"
  | "hello-required"
  | "hello-timeout"
  | "protocol-version"
  | "machine-id"
  | "identity"
  | "unknown-id"
  | "foreign-tunnel"
  | "liveness"
  | "device-error"
  | "admission"
  | "socket";

export interface ServerMetrics {
  registry: Registry;
  connectedDevices: Gauge;
  jobs: Gauge<"state" | "type">;
  jobDuration: Histogram<"type" | "result">;
  applyRoundTrip: Histogram<"result">;
  jobsTimedOut: Counter;
  jobsCorrected: Counter;
  autoSyncs: Counter<"outcome">;
  statusIngested: Counter;
  tunnelSamples: Counter;
  ingestBatchSeconds: Histogram;
  ingestBatchRows: Histogram;
  ingestDropped: Counter<"reason">;
  ingestWriteFailures: Counter;
  ingestPauses: Counter;
  ingestBuffered: Gauge;
  wsMessages: Counter<"type">;
  wsErrors: Counter<"kind">;
  publicAddressChanges: Counter<"outcome">;
  deviceRequests: Counter<"method" | "outcome">;
  dutyRuns: Counter<"duty">;
  /** Hellos per transaction (gateway/hello-batch.ts): its count is the hello transactions (a failed batch retries its hellos one each). */
  helloBatchSize: Histogram;
  /** Incremented by the notification engine. */
  notificationsRaised: Counter<"event" | "severity">;
  notificationDeliveryFailures: Counter<"channel">;
  /** Set by the gateway: counts jobs by state and type at scrape time. */
  setJobCounter(fn: () => Promise<{ state: string; type: string; count: number }[]>): void;
}

export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tern_" });
  let countJobs: (() => Promise<{ state: string; type: string; count: number }[]>) | null = null;
  const registers = [registry];

  const metrics: ServerMetrics = {
    registry,
    connectedDevices: new Gauge({
      name: "tern_connected_devices",
      help: "Devices whose websocket this instance holds (welcomed)",
      registers,
    }),
    jobs: new Gauge({
      name: "tern_jobs",
      help: "Jobs in the database by state and type",
      labelNames: ["state", "type"],
      registers,
      async collect() {
        if (!countJobs) return;
        this.reset();
        for (const row of await countJobs()) this.set({ state: row.state, type: row.type }, row.count);
      },
    }),
    jobDuration: new Histogram({
      name: "tern_job_duration_seconds",
      help: "Time from a job being queued to its end (complete or failed)",
      labelNames: ["type", "result"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600, 3600],
      registers,
    }),
    applyRoundTrip: new Histogram({
      name: "tern_apply_round_trip_seconds",
      help: "Time from sending an apply to its result",
      labelNames: ["result"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180],
      registers,
    }),
    jobsTimedOut: new Counter({ name: "tern_jobs_timed_out_total", help: "Jobs failed by time-out", registers }),
    jobsCorrected: new Counter({
      name: "tern_jobs_corrected_total",
      help: "Timed-out jobs corrected to complete when the device reported their hash",
      registers,
    }),
    autoSyncs: new Counter({
      name: "tern_auto_sync_total",
      help: "Automatic re-syncs of drifted devices (queued) and pauses after too many",
      labelNames: ["outcome"],
      registers,
    }),
    statusIngested: new Counter({ name: "tern_status_messages_total", help: "Status messages ingested", registers }),
    tunnelSamples: new Counter({ name: "tern_tunnel_samples_total", help: "Tunnel samples written", registers }),
    ingestBatchSeconds: new Histogram({
      name: "tern_ingest_batch_duration_seconds",
      help: "Time to write one batch of live state and samples",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    helloBatchSize: new Histogram({
      name: "tern_hello_batch_size",
      help: "Hellos recorded per transaction (hellos arriving together share one)",
      buckets: [1, 2, 5, 10, 25, 50, 100, 200],
      registers,
    }),
    ingestBatchRows: new Histogram({
      name: "tern_ingest_batch_rows",
      help: "Tunnel samples per written batch",
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000],
      registers,
    }),
    ingestDropped: new Counter({
      name: "tern_ingest_dropped_total",
      help: "Samples dropped because the buffer was full",
      labelNames: ["reason"],
      registers,
    }),
    ingestWriteFailures: new Counter({
      name: "tern_ingest_write_failures_total",
      help: "Batches of live state whose write failed (retried, then dropped)",
      registers,
    }),
    ingestPauses: new Counter({
      name: "tern_ingest_read_pauses_total",
      help: "Times the ingest buffer reached its high-water mark and the reporting device links stopped being read",
      registers,
    }),
    ingestBuffered: new Gauge({ name: "tern_ingest_buffered_samples", help: "Samples waiting to be written", registers }),
    wsMessages: new Counter({
      name: "tern_ws_messages_total",
      help: "Valid device messages received, by type",
      labelNames: ["type"],
      registers,
    }),
    wsErrors: new Counter({
      name: "tern_ws_errors_total",
      help: "Refused connections and bad device messages, by kind",
      labelNames: ["kind"],
      registers,
    }),
    publicAddressChanges: new Counter({
      name: "tern_public_address_changes_total",
      help: "Public IP/port changes reported by devices: applied, or throttled by the rate limit",
      labelNames: ["outcome"],
      registers,
    }),
    deviceRequests: new Counter({
      name: "tern_device_requests_total",
      help: "On-demand reads sent to devices, by method and outcome",
      labelNames: ["method", "outcome"],
      registers,
    }),
    dutyRuns: new Counter({
      name: "tern_duty_runs_total",
      help: "Periodic duties this instance ran",
      labelNames: ["duty"],
      registers,
    }),
    notificationsRaised: new Counter({
      name: "tern_notifications_raised_total",
      help: "Notifications raised (new or repeated), by event and severity",
      labelNames: ["event", "severity"],
      registers,
    }),
    notificationDeliveryFailures: new Counter({
      name: "tern_notification_delivery_failures_total",
      help: "Failed notification deliveries, by channel",
      labelNames: ["channel"],
      registers,
    }),
    setJobCounter(fn) {
      countJobs = fn;
    },
  };
  return metrics;
}
