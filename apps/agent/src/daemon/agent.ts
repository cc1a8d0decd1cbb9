/**
 * The running agent (`tern-agent run`): reconcile loop + control link +
 * status loop + metrics, wired together. It restores the last good config at
 * start, keeps it running whether or not the server is reachable, pushes a
 * status every interval and at once when a driver calls notify().
 */
import {
  type AgentHealingReport,
  configHash,
  type DeviceConfig,
  PROTOCOL_VERSION,
  type RequestMethod,
  type Status,
} from "@tern/protocol";
import type { LaunchInfo } from "../commands/deps.ts";
import { createDumpArchive } from "../commands/dump.ts";
import type { BackoffOptions } from "../control/backoff.ts";
import { type ConnectionState, ControlClient, deviceWebsocketUrl, RequestHandler } from "../control/index.ts";
import type { DaemonMode, Driver, DriverContext, DriverDetails } from "../drivers/driver.ts";
import { describeError } from "../errors.ts";
import { writeFileAtomic } from "../fs.ts";
import type { DeviceCredentials } from "../identity/credentials.ts";
import { keyForChallenge } from "../identity/device-key.ts";
import { describeWanChange, type WanChange } from "../kernel-events/types.ts";
import { acquirePidLock, type PidLock } from "../lock.ts";
import type { AgentLogger } from "../log.ts";
import { AgentMetrics } from "../metrics/index.ts";
import type { AgentPaths } from "../paths.ts";
import { type ReconcileOutcome, Reconciler, StateStore } from "../reconcile/index.ts";
import type { Runner } from "../runner.ts";
import { type HealthSource, noTunnelQuality, StatusComposer, type TunnelQualitySource } from "../status/index.ts";
import { missingForCommit } from "../upgrade/health.ts";
import { readMarker, reportOf, type UpgradeMarker, writeMarker } from "../upgrade/marker.ts";
import { pruneVersions, removeUnpackLeftovers } from "../upgrade/prune.ts";
import { UpgradeReceiver } from "../upgrade/receiver.ts";
import { AGENT_VERSION } from "../version.ts";
import { DeviceActions } from "./device-actions.ts";
import { type Endpoint, startMetrics, startUi, uiSecretFile } from "./endpoints.ts";
import type { AgentSnapshot, AgentView, RecentError } from "./snapshot.ts";

export interface AgentOptions {
  paths: AgentPaths;
  mode: DaemonMode;
  drivers: Driver[];
  runner: Runner;
  log: AgentLogger;
  machineId: string;
  hostname: string;
  credentials: DeviceCredentials | null;
  /** Status interval before a welcome or config says otherwise. */
  statusIntervalMs: number;
  /** Null: no metrics endpoint. Port 0 picks a free one. */
  metrics: { host: string; port: number } | null;
  /** The troubleshooting page; null: not served. Port 0 picks a free one. */
  ui?: { host: string; port: number } | null;
  tunnels?: TunnelQualitySource;
  health?: HealthSource | null;
  backoff?: BackoffOptions;
  silenceTimeoutMs?: number;
  /**
   * Ends the process so its supervisor starts it again (the `restart-agent` action; `run` exits with
   * RESTART_EXIT_CODE). Absent: the action is refused.
   */
  onRestart?: () => void;
  /** CA certificates the server's TLS certificate must chain to (control/tls.ts); undefined = Node's roots. */
  ca?: string[] | undefined;
  /** The kernel's WAN carrier/address events (kernel-events/WanWatcher); absent: probes alone notice a dead WAN. */
  wans?: WanWatch;
  /** Agent upgrades (docs/upgrades.md): the trusted keys, how this process started, how to stop it. */
  upgrade?: { keys: readonly string[]; launch?: LaunchInfo | undefined; stop(): void };
  /** The version this agent reports (default AGENT_VERSION; tests run "other versions"). */
  version?: string;
}

/** What the agent needs of the WAN watcher (kernel-events/wan-watcher.ts). */
export interface WanWatch {
  configure(config: DeviceConfig): void;
  onChange(listener: (changes: WanChange[]) => void | Promise<void>): void;
  setLogger?(log: AgentLogger): void;
  close(): void;
}

const MAX_RECENT_ERRORS = 50;
const NOTIFY_DEBOUNCE_MS = 100;
/** Driver details (`inspect`: IKE SAs, policy choices) are read at most this often. */
const DETAILS_EVERY_MS = 5000;

export class Agent implements AgentView {
  readonly reconciler: Reconciler;
  readonly metrics: AgentMetrics;
  readonly control: ControlClient | null;
  private readonly composer: StatusComposer;
  private readonly requests: RequestHandler;
  private readonly tunnels: TunnelQualitySource;
  private readonly context: DriverContext;
  private readonly startedAt = new Date().toISOString();
  private readonly recentErrors: RecentError[] = [];
  private lock: PidLock | null = null;
  private metricsEndpoint: Endpoint | null = null;
  private uiEndpoint: Endpoint | null = null;
  private driverDetails: Record<string, DriverDetails> = {};
  private detailsAt = 0;
  private statusTimer: NodeJS.Timeout | null = null;
  private notifyTimer: NodeJS.Timeout | null = null;
  private lastStatus: Status | null = null;
  private configuredTunnelsFor: string | null = null;
  private stopped = false;
  /** The last upgrade's marker: pending (this version must prove healthy) or its outcome to report. */
  private upgradeMarker: UpgradeMarker | null = null;
  private readonly version: string;

  constructor(private readonly options: AgentOptions) {
    const { paths, mode, runner, log } = options;
    this.tunnels = options.tunnels ?? noTunnelQuality;
    this.version = options.version ?? AGENT_VERSION;
    this.metrics = new AgentMetrics(this.tunnels);
    // One context object for every driver call: `controlServer` changes when the control link connects somewhere new.
    this.context = {
      runner,
      mode,
      stateDir: paths.stateDir,
      runDir: paths.runDir,
      log,
      notify: (reason) => this.notify(reason),
      controlServer: null,
    };
    this.reconciler = new Reconciler({
      drivers: options.drivers,
      context: this.context,
      store: new StateStore(paths, log),
      log,
      observer: {
        driverFinished: (r) => this.metrics.driverFinished(r),
        applyFinished: (o) => this.afterApply(o),
      },
    });
    this.composer = new StatusComposer({
      drivers: options.drivers,
      context: this.context,
      reconciler: this.reconciler,
      tunnels: this.tunnels,
      health: options.health === undefined ? null : options.health,
      log,
    });
    this.requests = new RequestHandler({
      drivers: options.drivers,
      context: this.context,
      current: () => this.reconciler.current,
      tunnels: this.tunnels,
      actions: new DeviceActions({
        reconciler: this.reconciler,
        log,
        restart: options.onRestart,
        notify: (reason) => this.notify(reason),
      }),
      // The daemon logs there (commands/run.ts); read by the server's log-read.
      logFile: paths.logFile,
      dumps: {
        dir: paths.dumps,
        create: () =>
          createDumpArchive({
            paths,
            mode,
            host: options.hostname,
            runner,
            drivers: options.drivers,
            includeSecrets: false,
            recordedOptions: {
              requestedBy: "server",
              mode,
              stateDir: paths.stateDir,
              runDir: paths.runDir,
              hostname: options.hostname,
            },
          }),
      },
      ...(options.upgrade
        ? {
            upgrades: new UpgradeReceiver({
              stateDir: paths.stateDir,
              lockFile: paths.lock,
              keys: options.upgrade.keys,
              runningVersion: this.version,
              runner,
              launch: options.upgrade.launch,
              before: () => ({
                tunnelsUp: (this.lastStatus?.tunnels ?? []).filter((t) => t.up).map((t) => t.id),
                hadConfig: this.reconciler.appliedHash !== null,
              }),
              stop: options.upgrade.stop,
              log: log.child({ component: "upgrade" }),
            }),
          }
        : {}),
    });
    this.control = options.credentials ? this.makeControl(options.credentials) : null;
    options.wans?.setLogger?.(log.child({ component: "kernel-events" }));
    options.wans?.onChange((changes) => this.wansChanged(changes));
  }

  /** Takes the lock, restores the last good config, then opens metrics, the control link and the status loop. */
  async start(): Promise<void> {
    const { paths } = this.options;
    this.lock = await acquirePidLock(paths.lock, "starting the agent");
    try {
      await this.startLocked();
    } catch (err) {
      // E.g. the state dir is unwritable: give the lock back so a fixed restart (or `apply`) can run.
      this.stopped = true;
      await this.control?.stop();
      await this.lock.release();
      throw err;
    }
  }

  private async startLocked(): Promise<void> {
    const { log } = this.options;
    this.upgradeMarker = await readMarker(this.options.paths.stateDir);
    // Retention (docs/upgrades.md#retention): what a crash mid-upgrade left, and old versions a commit that was
    // interrupted before its prune (or a rollback) left; nothing but leftovers while an upgrade is pending.
    const upgradeLog = log.child({ component: "upgrade" });
    await removeUnpackLeftovers(this.options.paths.stateDir, upgradeLog);
    if (this.upgradeMarker?.state !== "pending") await pruneVersions(this.options.paths.stateDir, upgradeLog);
    if (this.upgradeMarker?.state === "pending" && this.upgradeMarker.to !== this.version) this.upgradeMarker = null;
    if (this.upgradeMarker?.state === "pending")
      log.info("upgraded: committing once healthy", {
        from: this.upgradeMarker.from,
        deadline: new Date(this.upgradeMarker.deadline).toISOString(),
      });
    await this.reconciler.init();
    if (this.reconciler.interrupted)
      this.recordError("apply", `the apply of ${this.reconciler.interrupted.hash} was interrupted (agent stopped mid-apply)`);
    const restored = await this.reconciler.restore();
    if (restored) log.info("last good config restored", { ok: restored.ok, hash: restored.appliedHash });
    const report = (source: string, message: string) => this.recordError(source, message);
    if (this.options.metrics)
      this.metricsEndpoint = await startMetrics(
        this.metrics.registry,
        this.options.metrics,
        log,
        report,
        this.options.paths.stateDir,
      );
    if (this.options.ui) this.uiEndpoint = await startUi(this, this.options.paths.stateDir, this.options.ui, log, report);
    if (this.control) this.control.start();
    else log.warn("not registered: running the last good config without a server (tern-agent register to connect)");
    await this.tick();
  }

  /** Stops the link, loops and metrics; leaves the router as configured (a stopped agent keeps routing). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.statusTimer) clearTimeout(this.statusTimer);
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    await this.control?.stop();
    await this.reconciler.idle();
    for (const d of this.options.drivers)
      await Promise.resolve(d.close?.()).catch((err: unknown) =>
        this.options.log.warn(`${d.name}: close failed`, { error: describeError(err) }),
      );
    this.tunnels.close?.();
    this.options.wans?.close();
    await this.metricsEndpoint?.close();
    await this.uiEndpoint?.close();
    await this.writeStatusFile().catch(() => {});
    await this.lock?.release();
    this.options.log.info("agent stopped");
  }

  /**
   * Drivers and probes call this (through ctx.notify) when something worth
   * reporting at once happened; changes close together go out in one status.
   */
  notify(reason: string, delayMs = NOTIFY_DEBOUNCE_MS): void {
    this.options.log.debug("notify", { reason });
    if (this.notifyTimer || this.stopped) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      void this.pushStatus().catch((err: unknown) => this.options.log.error("status failed", { error: describeError(err) }));
    }, delayMs);
  }

  /**
   * The kernel reported WANs whose carrier or address changed. The policy
   * driver goes first and alone: moving traffic has a 100 ms budget, and the
   * status push and a re-key reconcile each spawn dozens of commands that
   * would compete with it for the CPU (measured: 107 ms instead of 23 ms for an
   * address removal on 2 cores). Then the server is told at once and the other
   * drivers react (IKE re-keying), in parallel.
   */
  private async wansChanged(changes: WanChange[]): Promise<void> {
    const config = this.reconciler.current;
    if (!config || this.stopped) return;
    const what = changes.map(describeWanChange).join("; ");
    const seenAt = Math.min(...changes.map((c) => c.seenAt));
    this.options.log.info("WAN changed (kernel)", { change: what });
    const react = async (drivers: Driver[]) => {
      const results = await Promise.allSettled(
        drivers.map(async (d) => {
          await d.wanChanged?.(changes, config, this.context);
          this.options.log.info(`${d.name}: reacted to the WAN change`, {
            change: what,
            ms: Math.round(performance.now() - seenAt),
          });
        }),
      );
      for (const r of results) if (r.status === "rejected") this.recordError("kernel", describeError(r.reason));
    };
    const hooked = this.options.drivers.filter((d) => d.wanChanged);
    await react(hooked.filter((d) => d.name === "policy"));
    this.notify(`kernel: ${what}`, 0);
    await react(hooked.filter((d) => d.name !== "policy"));
  }

  snapshot(): AgentSnapshot {
    const c = this.control;
    const creds = this.options.credentials;
    return {
      agentVersion: this.version,
      pid: process.pid,
      mode: this.options.mode,
      stateDir: this.options.paths.stateDir,
      runDir: this.options.paths.runDir,
      machineId: this.options.machineId,
      hostname: this.options.hostname,
      deviceId: c?.welcome?.deviceId ?? creds?.deviceId ?? null,
      startedAt: this.startedAt,
      updatedAt: new Date().toISOString(),
      connection: {
        state: c ? c.state : "disabled",
        since: c?.since ?? null,
        server: creds?.server ?? null,
        url: creds ? deviceWebsocketUrl(creds.server) : null,
        lastError: c?.lastError ?? null,
        reconnects: c?.reconnects ?? 0,
        serverVersion: c?.welcome?.serverVersion ?? null,
        statusIntervalMs: this.statusIntervalMs(),
      },
      appliedHash: this.reconciler.appliedHash,
      applying: this.reconciler.applying,
      interrupted: this.reconciler.interrupted,
      lastApply: this.reconciler.lastOutcome,
      drivers: Object.fromEntries(this.reconciler.driverStates),
      driverDetails: this.driverDetails,
      status: this.lastStatus,
      tunnelDetails: this.tunnels.details?.() ?? [],
      recentErrors: [...this.recentErrors],
      metrics: this.metricsEndpoint ? { host: this.metricsEndpoint.host, port: this.metricsEndpoint.port } : null,
      ui: this.uiEndpoint
        ? {
            url: `http://${this.uiEndpoint.host}:${this.uiEndpoint.port}/`,
            secretFile: uiSecretFile(this.options.paths.stateDir),
          }
        : null,
      controlServer: this.context.controlServer ?? null,
    };
  }

  request(method: RequestMethod, params: unknown): Promise<unknown> {
    return this.requests.handle(method, params);
  }

  async refresh(): Promise<Status> {
    return this.pushStatus();
  }

  /** Applies a config as the server would (used by `apply` messages and tests). */
  apply(config: unknown, source: string, expectedHash?: string): Promise<ReconcileOutcome> {
    return this.reconciler.submit(config, { source, ...(expectedHash !== undefined ? { expectedHash } : {}) });
  }

  /** Welcome (while connected) wins, then the applied config's monitoring, then the command line. */
  statusIntervalMs(): number {
    if (this.control?.connected && this.control.welcome) return this.control.welcome.statusIntervalMs;
    return this.reconciler.current?.monitoring.statusIntervalMs ?? this.options.statusIntervalMs;
  }

  private makeControl(creds: DeviceCredentials): ControlClient {
    return new ControlClient({
      url: deviceWebsocketUrl(creds.server),
      token: creds.deviceToken,
      deviceId: creds.deviceId,
      // Read at every connection: a re-key (tern-agent rekey) may have replaced the key meanwhile.
      key: (serverKey) => keyForChallenge(this.options.paths, serverKey),
      ca: this.options.ca,
      log: this.options.log.child({ component: "control" }),
      ...(this.options.backoff ? { backoff: this.options.backoff } : {}),
      ...(this.options.silenceTimeoutMs ? { silenceTimeoutMs: this.options.silenceTimeoutMs } : {}),
      handlers: {
        hello: () => ({
          protocolVersion: PROTOCOL_VERSION,
          agentVersion: this.version,
          machineId: this.options.machineId,
          hostname: this.options.hostname,
          appliedHash: this.reconciler.appliedHash,
        }),
        // Report at once what happened while offline: the applied hash and fresh state.
        welcome: () => void this.tick(),
        apply: async ({ id, hash, config }) => {
          const o = await this.apply(config, `server apply ${id}`, hash);
          return {
            ok: o.ok,
            appliedHash: o.appliedHash,
            rolledBack: o.rolledBack,
            drivers: o.drivers,
            ...(o.error !== undefined ? { error: o.error } : {}),
          };
        },
        request: (method, params, run) => this.requests.handle(method, params, run),
        state: (state: ConnectionState, detail) => {
          this.metrics.setConnected(state === "connected");
          if (state === "connected") this.controlServerIs(this.control?.peer ?? null);
          if (state === "connecting" && (this.control?.reconnects ?? 0) > 0) this.metrics.reconnecting();
          if (state === "disconnected" && detail) this.recordError("control", detail);
          void this.writeStatusFile().catch(() => {});
        },
      },
    });
  }

  /**
   * Management QoS marks the control connection by the server's address and
   * port: when the link connects to a new one (first connect, DNS change),
   * the current config is applied again so QoS marks the new one.
   */
  private controlServerIs(peer: { address: string; port: number } | null): void {
    if (!peer || !/^\d+\.\d+\.\d+\.\d+$/.test(peer.address)) return;
    const was = this.context.controlServer;
    if (was && was.address === peer.address && was.port === peer.port) return;
    this.context.controlServer = { address: peer.address, port: peer.port };
    this.options.log.info("control server address", { ...peer, was: was ?? null });
    if (this.reconciler.current) this.reconciler.requestReconcile(`control server is ${peer.address}:${peer.port}`);
  }

  private afterApply(outcome: ReconcileOutcome): void {
    this.metrics.applyFinished(outcome);
    // A new config makes the drivers' details stale: read them with the next status.
    this.detailsAt = 0;
    if (!outcome.ok && !outcome.superseded) this.recordError("apply", outcome.error ?? "apply failed");
    const current = this.reconciler.current;
    if (current) void this.configureTunnels(current);
    if (current) this.options.wans?.configure(current);
    this.notify(`apply ${outcome.ok ? "ok" : "failed"}`);
  }

  private async configureTunnels(config: DeviceConfig): Promise<void> {
    const hash = configHash(config);
    if (!this.tunnels.configure || this.configuredTunnelsFor === hash) return;
    this.configuredTunnelsFor = hash;
    try {
      await this.tunnels.configure(config, this.context);
    } catch (err) {
      this.recordError("tunnels", describeError(err));
    }
  }

  private recordError(source: string, message: string): void {
    const i = this.recentErrors.findIndex((e) => e.source === source && e.message === message);
    const count = i >= 0 ? (this.recentErrors.splice(i, 1)[0]?.count ?? 0) + 1 : 1;
    this.recentErrors.unshift({ at: new Date().toISOString(), source, message, count });
    this.recentErrors.length = Math.min(this.recentErrors.length, MAX_RECENT_ERRORS);
  }

  /** One status tick: compose, write the status file, send when connected, schedule the next. */
  private async tick(): Promise<void> {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = null;
    if (this.stopped) return;
    await this.pushStatus().catch((err: unknown) => this.options.log.error("status failed", { error: describeError(err) }));
    if (this.stopped) return;
    this.statusTimer = setTimeout(() => void this.tick(), this.statusIntervalMs());
  }

  private async pushStatus(): Promise<Status> {
    await this.heal();
    const status = await this.composer.compose();
    await this.refreshDetails();
    for (const [source, message] of this.composer.errors) this.recordError(source, message);
    // Composing awaits the drivers: an apply may have finished (and its apply-result gone out) meanwhile.
    // The status must say what is applied when it is sent, or the server takes the stale hash for drift.
    status.appliedHash = this.reconciler.appliedHash;
    status.applying = this.reconciler.applying;
    if (this.reconciler.dataPlane === "stopped") status.dataPlane = "stopped";
    this.addHealing(status);
    await this.checkUpgrade(status);
    const report = reportOf(this.upgradeMarker);
    if (report) status.upgrade = report;
    this.lastStatus = status;
    await this.writeStatusFile();
    this.control?.send(status);
    return status;
  }

  /**
   * A pending upgrade to this version commits once the agent is healthy (upgrade/health.ts); the guard, not
   * this code, rolls back when it is not (this version may be the broken one).
   */
  private async checkUpgrade(status: Status): Promise<void> {
    const marker = this.upgradeMarker;
    if (marker?.state !== "pending") return;
    const missing = missingForCommit(marker, {
      connected: this.control?.connected === true,
      appliedHash: this.reconciler.appliedHash,
      applying: this.reconciler.applying,
      lastApplyFailed: this.reconciler.lastOutcome?.ok === false,
      tunnelsUp: status.tunnels.filter((t) => t.up).map((t) => t.id),
    });
    if (missing) {
      this.options.log.debug("upgrade not committed yet", { missing });
      return;
    }
    // The guard may have rolled back meanwhile: never overwrite its verdict.
    const onDisk = await readMarker(this.options.paths.stateDir);
    if (onDisk?.upgradeId !== marker.upgradeId || onDisk.state !== "pending") {
      this.upgradeMarker = onDisk;
      return;
    }
    this.upgradeMarker = { ...marker, state: "committed", at: new Date().toISOString() };
    await writeMarker(this.options.paths.stateDir, this.upgradeMarker);
    this.options.log.info("upgrade committed: this version is healthy", { from: marker.from, to: marker.to });
    // Only now may older versions go: until the commit, the guard may still roll back to `previous`.
    await pruneVersions(this.options.paths.stateDir, this.options.log.child({ component: "upgrade" }));
  }

  /** What the drivers healed by themselves lately and the WAN link figures (docs/healing.md); left out when empty. */
  private addHealing(status: Status): void {
    const reports = new Map<string, AgentHealingReport>();
    for (const d of this.options.drivers) for (const r of d.healingReports?.() ?? []) reports.set(r.id, r);
    if (reports.size > 0) status.healing = [...reports.values()].slice(-100);
    const links = this.tunnels.links?.() ?? [];
    if (links.length > 0) status.links = links.slice(0, 64);
  }

  /** Lets drivers restart what their daemons gave up on, between applies (never during one). */
  private async heal(): Promise<void> {
    const config = this.reconciler.current;
    if (!config || this.reconciler.applying) return;
    for (const d of this.options.drivers) {
      if (!d.heal) continue;
      try {
        const restarted = await d.heal(config, this.context);
        if (restarted.length > 0) this.options.log.info("restarted what a daemon gave up on", { driver: d.name, restarted });
      } catch (err) {
        this.recordError(d.name, describeError(err));
      }
    }
  }

  /** Reads each driver's local details (IKE SAs, policy choices), at most every DETAILS_EVERY_MS. */
  private async refreshDetails(): Promise<void> {
    const config = this.reconciler.current;
    if (Date.now() - this.detailsAt < DETAILS_EVERY_MS) return;
    this.detailsAt = Date.now();
    const details: Record<string, DriverDetails> = {};
    if (config)
      for (const d of this.options.drivers) {
        if (!d.inspect) continue;
        try {
          details[d.name] = await d.inspect(config, this.context);
        } catch (err) {
          details[d.name] = { lines: [`unavailable: ${describeError(err)}`], data: null };
        }
      }
    this.driverDetails = details;
  }

  private async writeStatusFile(): Promise<void> {
    await writeFileAtomic(this.options.paths.status, `${JSON.stringify(this.snapshot(), null, 2)}\n`, 0o644);
  }
}
