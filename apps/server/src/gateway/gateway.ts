/**
 * The device gateway of one server instance: the websocket endpoint on the
 * server's HTTP listener, the links it holds, the job engine that feeds them,
 * status ingestion, liveness, the instance heartbeat, the LISTEN/NOTIFY bus to
 * the other instances and the periodic duties. It implements DeviceLink, the
 * face the rest of the server sees (deps.deviceLink).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ServerType } from "@hono/node-server";
import { type JobError, MAX_MESSAGE_BYTES, type RequestMethod } from "@tern/protocol";
import { sql } from "kysely";
import { WebSocketServer } from "ws";
import { postgresDb } from "../db/database.ts";
import { FOLD_ORGS, foldRowCounts, foldRowUpdates } from "../db/row-counts.ts";
import type { AppDeps } from "../deps.ts";
import { emptySettled, reportFinishedJobs } from "../jobs/finished-jobs.ts";
import { JobEngine } from "../jobs/job-engine.ts";
import { timeOutStaleRunning } from "../jobs/job-store.ts";
import { statisticsDuties } from "../services/statistics/duties.ts";
import { statisticsSettings } from "../services/statistics/settings.ts";
import { StatisticsWriter } from "../services/statistics/writer.ts";
import { TUNNEL_STATUS_DUTY_MS, tunnelStatusDuty } from "../services/tunnels/stored-status.ts";
import { AdmissionPacer } from "./admission.ts";
import { type Bus, type BusTarget, createBus } from "./bus.ts";
import { DeviceConnection, LinkSocket } from "./connection.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS, type DeviceLink, type LinkRequestStream, type RequestParams } from "./device-link.ts";
import { type Duty, DutyRunner } from "./duties.ts";
import type { GatewayEvents } from "./events.ts";
import { HELLO_WINDOW_MS } from "./hello-batch.ts";
import { LinkHandler } from "./link-handler.ts";
import { HealingMonitor } from "./live-state/healing-monitor.ts";
import { IngestBuffer } from "./live-state/ingest-buffer.ts";
import { PublicAddressTracker } from "./live-state/public-address.ts";
import { deleteLatestOfDeletedTunnels, deleteStaleReplies } from "./live-state/retention.ts";
import { copyWriterPool } from "./live-state/sample-copy.ts";
import { VrrpRecorder } from "./live-state/vrrp-states.ts";
import { WanAddressTracker } from "./live-state/wan-address.ts";
import { LoopHealth } from "./loop-health.ts";
import { type GatewayOptions, gatewayOptions } from "./options.ts";
import { RequestRouter, type RpcMessage } from "./requests.ts";
import {
  disconnectUnsessioned,
  heartbeat,
  reapStaleLinks,
  reclaimSession,
  registerInstance,
  unregisterInstance,
} from "./sessions.ts";
import { loadTunnelSides } from "./tunnel-sides.ts";
import { refuseUpgrade, requestHost, upgradeAuthenticator } from "./upgrade.ts";

/** A listener for an upgrading socket's errors (they end in its close); module-level so it holds no request. */
const ignoreSocketError = (): void => {};

export interface Gateway extends DeviceLink {
  readonly instanceId: string;
  readonly options: GatewayOptions;
  readonly ingest: IngestBuffer;
  readonly statistics: StatisticsWriter;
  readonly duties: DutyRunner;
  readonly engine: JobEngine;
  /** The LISTEN/NOTIFY bus between instances (the live-event hub listens on it too). */
  readonly bus: Bus;
  /** Listens for device websockets on the server's HTTP listener. */
  attach(server: ServerType): void;
  /** Registers the instance and starts the bus, timers and duties. */
  start(): Promise<void>;
  /** Closes every link (they reconnect to another instance), flushes ingestion, leaves the cluster. */
  close(): Promise<void>;
  /** The welcomed link of a device on this instance. */
  link(deviceId: string): DeviceConnection | undefined;
  readonly linkCount: number;
}

/** Queued jobs of local devices are looked for this often, in case a notification was missed. */
const SWEEP_MS = 30_000;
/** The repairs that read a whole table run this often (the "orphan-sweep" duty). */
const ORPHAN_SWEEP_MS = 60_000;

/** What the rest of the server adds to the gateway: periodic duties of its own (the notification engine's). */
/** Links pinged per turn of the event loop by the liveness sweep. */
const PINGS_PER_TURN = 500;

export interface GatewayExtras {
  duties?: Duty[];
}

export function createGateway(deps: AppDeps, database: BusTarget, events: GatewayEvents, extras: GatewayExtras = {}): Gateway {
  const options = gatewayOptions(deps.config);
  const instanceId = randomUUID();
  const logger = deps.logger.child({ component: "gateway", instance: instanceId.slice(0, 8) });
  const db = deps.db;
  const links = new Map<string, DeviceConnection>();
  const sockets = new Set<DeviceConnection>();
  const pendingWork = new Set<Promise<void>>();
  const staleMs = options.heartbeatMs * 3;
  const bus: Bus = createBus(database, logger);
  const engine = new JobEngine(deps, events, options);
  // On PostgreSQL the batched status writer has a connection of its own: a burst of per-device work
  // (thousands of devices connecting, each with its first status) queues in the shared pool, and the
  // writer waiting behind it for seconds would hold the buffer up meanwhile. It writes samples with COPY.
  // PGlite has one connection anyway (and the one-statement insert).
  const writerPool = database.url ? copyWriterPool(database.url) : undefined;
  // The heartbeat too: behind a busy pool it would starve, and the instance would look dead to the others.
  const livenessDb = database.url ? postgresDb(database.url, 1) : db;
  const loop = new LoopHealth(Math.max(10, Math.min(1000, options.heartbeatMs / 4)), options.heartbeatMs / 2, (ms) => {
    logger.warn({ stalledMs: Math.round(ms) }, "event loop stalled: heartbeat now, no instance judged dead for a stale period");
    if (!closing) void beat();
  });
  const ingest = new IngestBuffer(
    db,
    deps.metrics,
    logger,
    {
      batchRows: options.ingestBatchRows,
      flushMs: options.ingestFlushMs,
      maxBuffered: options.ingestMaxBuffered,
    },
    ({ states, latest }) =>
      // Committed: listeners that re-read the database (live events) see what they announce.
      events.emit("live-state-written", {
        devices: states.map((s) => ({ deviceId: s.deviceId, orgId: s.orgId })),
        tunnelEnds: latest.map((t) => ({ tunnelId: t.tunnelId, deviceId: t.deviceId, side: t.side, up: t.up, at: t.at })),
      }),
    writerPool,
  );
  // Back-pressure: links that report while the buffer is over its high-water mark are not read until it
  // drains (their statuses wait in the sockets, then TCP slows the devices): nothing is dropped.
  const heldReads = new Set<DeviceConnection>();
  ingest.onRelieved = () => {
    for (const conn of heldReads) if (conn.open) conn.ws.resume();
    heldReads.clear();
  };
  const statsSettings = statisticsSettings(deps.config);
  const statistics = new StatisticsWriter(db, statsSettings, logger.child({ part: "statistics" }));
  const publicAddresses = new PublicAddressTracker(deps, events, {
    maxChanges: options.publicAddressMaxChanges,
    windowMs: options.publicAddressWindowMs,
  });
  // A change not yet written when the gateway stops is seen again at the device's next link (stored vs reported).
  const wanAddresses = new WanAddressTracker(deps, options.wanAddressDebounceMs, (work) => track(work));
  const router = new RequestRouter(instanceId, db, bus, (id) => links.get(id), staleMs, deps.metrics, logger);
  const wss = new WebSocketServer<typeof LinkSocket>({
    noServer: true,
    WebSocket: LinkSocket,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
    clientTracking: false,
  });
  const timers: NodeJS.Timeout[] = [];
  let closing = false;
  /** Upgrades and links not yet welcomed (admission, TERN_WS_ADMISSION_MAX). */
  let admitting = 0;
  // A refused link is told its turn at the rate links leave admission (gateway/admission.ts).
  const pacer = new AdmissionPacer();
  // Upgrades arriving together (a fleet reconnecting) look their tokens up in one statement.
  const authenticate = upgradeAuthenticator(db, HELLO_WINDOW_MS);

  const track = (work: Promise<void>) => {
    pendingWork.add(work);
    void work.finally(() => pendingWork.delete(work));
  };

  const wake = (conn: DeviceConnection) => {
    // Jobs may have been queued while an apply is in flight: its result must look for them.
    conn.wokenSinceSend = true;
    if (conn.state !== "ready" || conn.wakePending) return;
    conn.wakePending = true;
    void conn.serial("dispatch", async () => {
      conn.wakePending = false;
      await engine.dispatch(conn);
    });
  };

  const handler = new LinkHandler({
    deps,
    options,
    instanceId,
    engine,
    events,
    bus,
    links,
    track,
    ingest: {
      db,
      buffer: ingest,
      engine,
      publicAddresses,
      wanAddresses,
      healing: new HealingMonitor(deps),
      vrrp: new VrrpRecorder(db, events),
      statistics,
      events,
      metrics: deps.metrics,
      holdReads(conn) {
        if (heldReads.has(conn)) return;
        heldReads.add(conn);
        conn.ws.pause();
      },
      reloadTunnels(conn) {
        conn.tunnelSidesLoadedAt = Date.now();
        void conn.serial("reload tunnels", async () => {
          conn.tunnelSides = await loadTunnelSides(db, conn.deviceId);
        });
      },
    },
  });
  const hooks = {
    onMessage: handler.onMessage.bind(handler),
    onClose(conn: DeviceConnection, code: number, reason: string) {
      sockets.delete(conn);
      heldReads.delete(conn);
      handler.onClose(conn, code, reason);
    },
  };

  const duties = new DutyRunner(
    db,
    instanceId,
    [
      {
        name: "job-timeouts",
        async run(trx, afterCommit) {
          const error: JobError = {
            reason: "timeout",
            message: `no result within ${Math.round(options.jobTimeoutMs / 1000)} s`,
            drivers: [],
          };
          const failed = await timeOutStaleRunning(trx, options.jobTimeoutMs, error);
          for (const deviceId of new Set(failed.map((j) => j.device_id)))
            await sql`select pg_notify('tern_jobs', ${deviceId})`.execute(trx);
          // Metrics (jobsTimedOut among them) and `jobs-finished` (a "job failed" notification) once committed.
          if (failed.length)
            afterCommit(() =>
              reportFinishedJobs(deps, events, { ...emptySettled(), failed: failed.map((j) => ({ ...j, error })) }),
            );
        },
      },
      {
        name: "stale-links",
        async run(trx, afterCommit) {
          // Right after a stall of this loop, a stale heartbeat may be this instance's view, not the other's state.
          if (!loop.healthyFor(staleMs)) return;
          const reaped = await reapStaleLinks(trx, staleMs, instanceId);
          // Told once the devices' new connection state is committed (listeners may read it).
          afterCommit(() => {
            for (const d of reaped) {
              events.emit("device-disconnected", {
                deviceId: d.id,
                orgId: d.organization_id,
                reason: "server instance stopped answering",
              });
            }
          });
        },
      },
      {
        // The samples' retention is the partition duty's (services/statistics/duties.ts): expired days dropped whole.
        name: "retention",
        async run(trx) {
          await deleteStaleReplies(trx);
        },
      },
      {
        // The two repairs that read a whole table (every device's row, every tunnel end's latest figures): once a
        // minute, not with the reaper and the retention every duty interval (sessions.ts, retention.ts).
        name: "orphan-sweep",
        intervalMs: Math.max(options.dutyIntervalMs, ORPHAN_SWEEP_MS),
        async run(trx, afterCommit) {
          const disconnected = await disconnectUnsessioned(trx);
          await deleteLatestOfDeletedTunnels(trx);
          afterCommit(() => {
            for (const d of disconnected) {
              events.emit("device-disconnected", {
                deviceId: d.id,
                orgId: d.organization_id,
                reason: "marked connected without a link",
              });
            }
          });
        },
      },
      {
        // Unfiltered lists sum these deltas for their total, filtered device lists them and the updates for their
        // version: kept to about one row per organization and table.
        name: "row-counts",
        async run(trx) {
          await foldRowUpdates(trx);
          return (await foldRowCounts(trx)) >= FOLD_ORGS ? "again" : undefined;
        },
      },
      // Tunnels' status folded into `tunnel_status` for pages in status order (services/tunnels/stored-status.ts).
      tunnelStatusDuty(Math.min(options.dutyIntervalMs, TUNNEL_STATUS_DUTY_MS)),
      ...statisticsDuties(statsSettings, logger.child({ part: "statistics" })),
      ...(extras.duties ?? []),
    ],
    options.dutyIntervalMs,
    deps.metrics,
    logger,
  );

  bus.on("tern_jobs", (deviceId) => {
    const conn = links.get(deviceId);
    if (conn) wake(conn);
  });
  bus.on("tern_device", (payload) => {
    const { id, op } = JSON.parse(payload) as { id: string; op: "deleted" | "unapproved" | "token" };
    const conn = links.get(id);
    if (!conn) return;
    if (op === "deleted") conn.close(4410, "device deleted");
    else if (op === "unapproved") conn.close(4003, "device approval withdrawn");
    else conn.close(4001, "device token replaced");
  });
  bus.on("tern_gateway", (payload) => {
    const msg = JSON.parse(payload) as RpcMessage | { kind: "session"; deviceId: string; sessionId: string; instanceId: string };
    if (msg.kind === "session") {
      const conn = links.get(msg.deviceId);
      if (msg.instanceId !== instanceId && conn && conn.sessionId !== msg.sessionId) {
        conn.close(4009, "replaced by a newer connection of this device");
      }
      return;
    }
    router.onMessage(msg);
  });
  bus.onReconnect(() => void sweep());

  /** Wakes every local device with queued jobs (after a missed notification). */
  async function sweep(): Promise<void> {
    const ids = [...links.keys()];
    if (ids.length === 0) return;
    try {
      const rows = await db
        .selectFrom("jobs")
        .select("device_id")
        .distinct()
        .where("state", "=", "queued")
        .where("device_id", "=", sql<string>`any(${ids}::uuid[])`)
        .execute();
      for (const r of rows) {
        const conn = links.get(r.device_id);
        if (conn) wake(conn);
      }
    } catch (err) {
      logger.warn({ err }, "sweep for queued jobs failed");
    }
  }

  /**
   * Pings every link, PINGS_PER_TURN at a time with a turn of the event loop between: one sweep over 10,000
   * links held the loop for about 100 ms, and every status arriving meanwhile waited for it.
   */
  let livenessRunning = false;
  async function liveness(): Promise<void> {
    if (livenessRunning) return;
    livenessRunning = true;
    try {
      let n = 0;
      for (const conn of sockets) {
        if (closing) return;
        // A link this server is not reading (back-pressure) cannot show its pongs: not judged meanwhile.
        if (conn.ws.isPaused) continue;
        if (conn.missedPongs >= options.pingMisses) {
          conn.fault("liveness", `no pong to ${conn.missedPongs} pings: link dropped`);
          conn.ws.terminate();
          continue;
        }
        conn.missedPongs++;
        conn.ws.ping();
        if (++n % PINGS_PER_TURN === 0) await new Promise((r) => setImmediate(r));
      }
    } finally {
      livenessRunning = false;
    }
  }

  async function beat(): Promise<void> {
    try {
      if (await heartbeat(livenessDb, instanceId)) return;
      // Judged dead (a long pause?) while alive: come back and re-claim the links held here.
      logger.warn("this instance was presumed dead by another; re-registering its links");
      await registerInstance(livenessDb, instanceId);
      for (const conn of links.values()) {
        if (conn.state !== "ready") continue;
        void conn.serial("re-claim", () => reclaimSession(db, conn, instanceId));
      }
    } catch (err) {
      logger.warn({ err }, "instance heartbeat failed");
    }
  }

  function remoteAddress(req: IncomingMessage): string {
    if (options.trustProxy) {
      const forwarded = String(req.headers["x-forwarded-for"] ?? "")
        .split(",")[0]
        ?.trim();
      if (forwarded) return forwarded;
    }
    return req.socket.remoteAddress ?? "";
  }

  /**
   * One admission slot, released once (the link's hello recorded, or the link gone first). Made here, not
   * inside onUpgrade: V8 gives every closure made in one function call that call's captured variables, so a
   * close listener made there (it lives as long as the link) kept the upgrade request and its `head` buffer
   * alive for the link's whole life.
   */
  function admissionSlot(): () => void {
    admitting++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      admitting--;
      pacer.released();
    };
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", ignoreSocketError);
    if (closing) {
      refuseUpgrade(socket, 503, "INTERNAL", "server shutting down: connect again");
      return;
    }
    // Admission: a reconnect storm beyond what is being admitted is told its turn to come back.
    if (admitting >= options.admissionMax) {
      deps.metrics.wsErrors.inc({ kind: "admission" });
      refuseUpgrade(
        socket,
        503,
        "INTERNAL",
        "server busy admitting devices: connect again after Retry-After",
        pacer.retryAfterS(),
      );
      return;
    }
    const done = admissionSlot();
    socket.once("close", done);
    authenticate(req).then(
      (outcome) => {
        if (!outcome.ok) {
          deps.metrics.wsErrors.inc({ kind: outcome.kind });
          logger.info({ status: outcome.status, remote: remoteAddress(req) }, `device websocket refused: ${outcome.message}`);
          refuseUpgrade(socket, outcome.status, outcome.code, outcome.message);
          return;
        }
        if (closing) return refuseUpgrade(socket, 503, "INTERNAL", "server shutting down: connect again");
        wss.handleUpgrade(req, socket, head, (ws) => {
          const conn = new DeviceConnection(
            ws,
            outcome.device,
            remoteAddress(req),
            hooks,
            deps.metrics,
            { rate: options.rate, rateBurst: options.rateBurst, helloTimeoutMs: options.helloTimeoutMs },
            logger,
          );
          sockets.add(conn);
          // Admitted once its hello is recorded (or the link ends first). The link's end is the connection's to
          // report from here: the socket keeps no listener of its own for the link's whole life (about 230 bytes
          // of heap a device).
          socket.removeListener("close", done);
          void conn.welcomedOrClosed().then(done);
          // Every link starts with a fresh challenge that only the device key can answer (in its hello).
          conn.challengeNonce = randomBytes(32).toString("base64url");
          conn.challengeHost = requestHost(req, options.trustProxy);
          conn.send({ type: "challenge", nonce: conn.challengeNonce, publicKey: outcome.device.publicKey });
        });
      },
      (err) => {
        logger.error({ err }, "device websocket authentication failed");
        refuseUpgrade(socket, 503, "INTERNAL", "could not check the device token: try again");
      },
    );
  }

  deps.metrics.setJobCounter(async () => {
    const rows = await db
      .selectFrom("jobs")
      .select(["state", "type", (eb) => eb.fn.countAll<number>().as("count")])
      .groupBy(["state", "type"])
      .execute();
    return rows.map((r) => ({ state: r.state, type: r.type, count: Number(r.count) }));
  });

  return {
    instanceId,
    options,
    ingest,
    statistics,
    duties,
    engine,
    events,
    bus,
    get linkCount() {
      return links.size;
    },
    link: (deviceId) => links.get(deviceId),
    isConnectedHere: (deviceId) => links.get(deviceId)?.state === "ready",
    requestFromDevice<M extends RequestMethod>(
      deviceId: string,
      method: M,
      params: RequestParams<M>,
      timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
      stream?: LinkRequestStream,
    ) {
      return router.request(deviceId, method, params, timeoutMs, stream);
    },
    attach(server) {
      server.on("upgrade", onUpgrade);
    },
    async start() {
      await registerInstance(db, instanceId);
      await bus.start();
      await duties.start();
      ingest.start();
      statistics.start();
      loop.start();
      timers.push(setInterval(() => void liveness(), options.pingIntervalMs));
      timers.push(setInterval(() => void beat(), options.heartbeatMs));
      timers.push(setInterval(() => void sweep(), SWEEP_MS));
      logger.info({ ping: options.pingIntervalMs, jobTimeout: options.jobTimeoutMs }, "device gateway started");
    },
    async close() {
      if (closing) return;
      closing = true;
      for (const t of timers) clearInterval(t);
      loop.stop();
      await duties.stop();
      wanAddresses.close();
      router.close();
      for (const conn of sockets) conn.close(1012, "server restarting: connect again");
      // Links whose peer does not answer the close frame are cut; their bookkeeping still runs.
      const deadline = Date.now() + 3_000;
      while (sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const conn of sockets) conn.ws.terminate();
      while (sockets.size > 0 && Date.now() < deadline + 1_000) await new Promise((r) => setTimeout(r, 10));
      await Promise.allSettled([...pendingWork]);
      await ingest.close();
      await writerPool?.end();
      await statistics.close();
      if (livenessDb !== db) await livenessDb.destroy();
      await bus.close();
      await unregisterInstance(db, instanceId).catch((err) => logger.warn({ err }, "could not unregister the instance"));
      wss.close();
    },
  };
}
