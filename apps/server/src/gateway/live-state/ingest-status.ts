/**
 * One `status` from a device: keep only the device's own tunnels (another
 * device's tunnel ids are ignored and counted), buffer its state and samples
 * for the batched writer, tell listeners, and hand what needs a decision now
 * (a changed applied hash, public address changes, VRRP states) to the job
 * engine, the public-address tracker and the VRRP recorder, which run in the
 * device's serial chain. Nothing here waits for the database.
 */
import type { Status, TunnelReport } from "@tern/protocol";
import type { Db } from "../../db/schema.ts";
import type { JobEngine } from "../../jobs/job-engine.ts";
import type { ServerMetrics } from "../../metrics/server-metrics.ts";
import type { StatisticsWriter } from "../../services/statistics/writer.ts";
import type { DeviceConnection } from "../connection.ts";
import type { GatewayEvents } from "../events.ts";
import type { HealingMonitor } from "./healing-monitor.ts";
import type { IngestBuffer, SampleRow } from "./ingest-buffer.ts";
import type { PublicAddressTracker } from "./public-address.ts";
import type { VrrpRecorder } from "./vrrp-states.ts";
import type { WanAddressTracker } from "./wan-address.ts";

export interface StatusIngestDeps {
  db: Db;
  buffer: IngestBuffer;
  engine: JobEngine;
  publicAddresses: PublicAddressTracker;
  /** New addresses of DHCP WANs: re-configure the far ends of the device's tunnels. */
  wanAddresses: WanAddressTracker;
  events: GatewayEvents;
  metrics: ServerMetrics;
  /** Baselines, anomalies and the agent's healing reports (docs/healing.md); absent in tests that do not need it. */
  healing?: HealingMonitor;
  /** Stops reading the link until the ingest buffer has drained (back-pressure, see ingest-buffer.ts). */
  holdReads?(conn: DeviceConnection): void;
  /** Reloads the device's tunnel ids (a tunnel created since the link opened). */
  reloadTunnels(conn: DeviceConnection): void;
  /** VRRP states into `vrrp_members`. */
  vrrp: VrrpRecorder;
  /** Statistics history's writer (services/statistics/writer.ts); absent in tests that do not need it. */
  statistics?: Pick<StatisticsWriter, "record">;
}

/** Unknown tunnel ids trigger at most one reload of the device's tunnels per this period. */
const TUNNEL_RELOAD_MS = 10_000;

export function ingestStatus(conn: DeviceConnection, status: Status, deps: StatusIngestDeps): void {
  const receivedAt = new Date();
  // The hash nearly every status repeats: what keeps it (the link, the rule engine, the healing) keeps the link's
  // one instance, not each its own copy from a different status (80 bytes each).
  if (status.appliedHash !== null) {
    if (status.appliedHash === conn.appliedHash) status.appliedHash = conn.appliedHash;
    else if (status.appliedHash === conn.lastStatusHash) status.appliedHash = conn.lastStatusHash;
  }
  const tunnels: (TunnelReport & { side: "a" | "b" })[] = [];
  let foreign = 0;
  for (const t of status.tunnels) {
    const side = conn.tunnelSides.get(t.id);
    if (side) tunnels.push({ ...t, side });
    else foreign++;
  }
  if (foreign > 0) {
    deps.metrics.wsErrors.inc({ kind: "foreign-tunnel" }, foreign);
    if (Date.now() - conn.tunnelSidesLoadedAt > TUNNEL_RELOAD_MS) {
      conn.logger.debug({ foreign }, "status names tunnels that are not this device's: ignored");
      deps.reloadTunnels(conn);
    }
  }
  const samples: SampleRow[] = tunnels.map((t) => ({
    tunnelId: t.id,
    deviceId: conn.deviceId,
    side: t.side,
    // The server's clock: devices' clocks may be off, and the time series must stay ordered.
    at: receivedAt,
    up: t.up,
    loss: t.loss,
    rtt: t.rtt,
    jitter: t.jitter,
    samples: t.samples,
    windowMs: t.windowMs ?? null,
    // A count that is not a consistent pair (received > sent) is dropped rather than stored.
    sent: t.sent !== undefined && t.received !== undefined && t.received <= t.sent ? t.sent : null,
    received: t.sent !== undefined && t.received !== undefined && t.received <= t.sent ? t.received : null,
  }));
  const reportedAt = new Date(status.at);
  deps.buffer.add(
    {
      deviceId: conn.deviceId,
      orgId: conn.orgId,
      reportedAt: Number.isNaN(reportedAt.getTime()) ? receivedAt : reportedAt,
      appliedHash: status.appliedHash,
      applying: status.applying,
      interfaces: status.interfaces,
      bgp: status.bgp,
      vrrp: status.vrrp,
      health: status.health,
    },
    samples,
  );
  if (deps.buffer.pressing) deps.holdReads?.(conn);
  deps.metrics.statusIngested.inc();
  conn.deviceApplying = status.applying;
  deps.events.emit("status", { deviceId: conn.deviceId, orgId: conn.orgId, status, tunnels, receivedAt });

  if (status.appliedHash !== conn.lastStatusHash) {
    conn.lastStatusHash = status.appliedHash;
    const hash = status.appliedHash;
    void conn.serial("reported hash", async () => {
      if (hash === conn.appliedHash && conn.inFlight?.hash !== hash) return;
      await deps.engine.onReportedHash(conn, hash);
    });
  }
  deps.publicAddresses.observe(conn, status.interfaces);
  deps.wanAddresses.observe(conn, status.interfaces);
  deps.healing?.observe(conn, status, tunnels, receivedAt);
  deps.statistics?.record(conn, status, receivedAt);
  deps.vrrp.observe(conn, status.vrrp);
}
