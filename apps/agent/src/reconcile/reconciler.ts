/**
 * The reconcile loop: applies whole DeviceConfigs through the drivers in
 * DRIVER_ORDER, one at a time (single-flight), always the newest one asked
 * for (latest wins: a config queued behind a running apply is replaced by a
 * newer one). A failed apply rolls the drivers that ran back to the last good
 * config (or tears them down when there is none). The last good config
 * persists; `restore()` re-applies it at start, so a restart converges even
 * after kill -9 in the middle of an apply.
 */
import {
  configHash,
  type DataPlaneState,
  type DeviceConfig,
  DeviceConfig as DeviceConfigSchema,
  type DriverResult,
  emptyDeviceConfig,
} from "@tern/protocol";
import type { Driver, DriverContext, Logger } from "../drivers/driver.ts";
import { AgentError, type AgentErrorCode, describeError, formatIssues } from "../errors.ts";
import type { AppliedRecord, PendingRecord, StateStore } from "./store.ts";

export interface ReconcileOutcome {
  ok: boolean;
  /** Hash of the config asked for (null when it was not a valid config). */
  hash: string | null;
  /** Hash of the config now applied: the requested one on success, the last good one after a rollback. */
  appliedHash: string | null;
  rolledBack: boolean;
  /** A newer config replaced this one before it ran. */
  superseded: boolean;
  drivers: DriverResult[];
  /** Results of the rollback pass, when there was one. */
  rollback: DriverResult[];
  code?: AgentErrorCode;
  /** `CODE: message` or `<driver> failed: …`. */
  error?: string;
  source: string;
  startedAt: string;
  finishedAt: string;
}

export interface DriverState extends DriverResult {
  at: string;
  /** Hash of the config the result belongs to. */
  hash: string;
}

/** Hooks for metrics; every method optional. */
export interface ReconcileObserver {
  driverFinished?(result: DriverResult): void;
  applyFinished?(outcome: ReconcileOutcome): void;
}

export interface ReconcilerOptions {
  drivers: Driver[];
  /**
   * The context handed to drivers, used as it is (the owner may change
   * `controlServer` later); the reconciler sets its `requestReconcile` unless
   * `oneShot`.
   */
  context: DriverContext;
  store: StateStore;
  log: Logger;
  observer?: ReconcileObserver;
  /** One-shot commands (`apply`): drivers get no `requestReconcile`. */
  oneShot?: boolean;
}

export interface SubmitOptions {
  /** The hash the sender computed; a different hash means the config was damaged on the way. */
  expectedHash?: string;
  /** Who asked, for logs and status: "server apply a12", "cli apply", "restore", "reapply: …". */
  source: string;
}

interface Job {
  config: DeviceConfig;
  hash: string;
  source: string;
  waiters: ((o: ReconcileOutcome) => void)[];
  superseded: ((o: ReconcileOutcome) => void)[];
  /** False for the tear-down of an interrupted first apply: an empty config is not a "last good" one. */
  persist: boolean;
}

/**
 * The config that keeps the router reachable with its data plane down (a `stop`): interfaces, addresses,
 * static routes, firewall, QoS and monitoring stay; tunnels, BGP, DHCP, VRRP, multi-link policy and the
 * remote worker VPN are torn down by their drivers (their daemons stop).
 */
export function dataPlaneStopped(config: DeviceConfig): DeviceConfig {
  const { remoteVpn: _vpn, ...rest } = config;
  return { ...rest, tunnels: [], bgp: null, dhcp: [], vrrp: [], policy: null };
}

export class Reconciler {
  private lastGood: AppliedRecord | null = null;
  /** True while the data plane is stopped: configs are refused and re-applies keep it stopped. */
  private halted = false;
  private queued: Job | null = null;
  private loop: Promise<void> | null = null;
  private reapplyReason: string | null = null;
  private readonly ctx: DriverContext;
  private runningHash: string | null = null;
  readonly driverStates = new Map<string, DriverState>();
  lastOutcome: ReconcileOutcome | null = null;
  /** The apply that a previous process did not finish, found at `init()`. */
  interrupted: PendingRecord | null = null;

  constructor(private readonly options: ReconcilerOptions) {
    this.ctx = options.context;
    if (!options.oneShot) this.ctx.requestReconcile = (r) => this.requestReconcile(r);
  }

  /** Loads the last good config and notes an interrupted apply. Call once before anything else. */
  async init(): Promise<void> {
    this.lastGood = await this.options.store.loadApplied();
    this.interrupted = await this.options.store.loadPending();
    this.halted = await this.options.store.loadStopped();
    if (this.interrupted)
      this.options.log.warn("the previous apply was interrupted; the last good config will be restored", {
        interruptedHash: this.interrupted.hash,
        startedAt: this.interrupted.startedAt,
        lastGood: this.lastGood?.hash ?? null,
      });
  }

  get appliedHash(): string | null {
    return this.lastGood?.hash ?? null;
  }

  /** The last good config (what the router runs), or null before the first successful apply. */
  get current(): DeviceConfig | null {
    return this.lastGood?.config ?? null;
  }

  get applying(): boolean {
    return this.runningHash !== null;
  }

  get dataPlane(): DataPlaneState {
    return this.halted ? "stopped" : "running";
  }

  /** A job that tears down (or keeps down) the data plane of the last good config; never the new "last good". */
  private stoppedJob(source: string, waiters: ((o: ReconcileOutcome) => void)[] = []): Job {
    const config = dataPlaneStopped(this.lastGood?.config ?? emptyDeviceConfig("none"));
    return { config, hash: configHash(config), source, waiters, superseded: [], persist: false };
  }

  /**
   * `stop`: the data plane goes down (dataPlaneStopped) and stays down, across restarts, until
   * `start`; configs from the server are refused meanwhile. A stop that fails is rolled back to the
   * last good config and the data plane counts as running.
   */
  async stopDataPlane(): Promise<ReconcileOutcome> {
    this.halted = true;
    await this.options.store.saveStopped(true);
    const outcome = await new Promise<ReconcileOutcome>((resolve) => this.enqueue(this.stoppedJob("stop", [resolve])));
    if (!outcome.ok) {
      this.halted = false;
      await this.options.store.saveStopped(false);
    }
    return outcome;
  }

  /** `start`: the last good config is applied again (null when there is none: nothing to start). */
  async startDataPlane(): Promise<ReconcileOutcome | null> {
    this.halted = false;
    await this.options.store.saveStopped(false);
    if (!this.lastGood) return null;
    return this.submit(this.lastGood.config, { source: "start" });
  }

  /**
   * `reset`, first part: the data plane goes down and the last good config is forgotten (a restart
   * restores nothing). `tearDown()` then removes the rest (addresses, routes, firewall), after the
   * server has the answer: it may cut the control link.
   */
  async forget(): Promise<ReconcileOutcome> {
    const outcome = await new Promise<ReconcileOutcome>((resolve) => this.enqueue(this.stoppedJob("reset", [resolve])));
    if (!outcome.ok) return outcome;
    await this.options.store.clearApplied();
    this.lastGood = null;
    this.halted = false;
    await this.options.store.saveStopped(false);
    return { ...outcome, appliedHash: null };
  }

  /** Everything the agent owns torn down (the empty config, as the package's teardown applies). */
  tearDown(source: string): Promise<ReconcileOutcome> {
    const config = emptyDeviceConfig("none");
    return new Promise((resolve) =>
      this.enqueue({ config, hash: configHash(config), source, waiters: [resolve], superseded: [], persist: false }),
    );
  }

  /**
   * At start: re-applies the last good config so the system converges to it
   * whatever happened while the agent was down. Without one, an interrupted
   * first apply is torn down (empty config).
   */
  async restore(): Promise<ReconcileOutcome | null> {
    if (this.halted) return new Promise((resolve) => this.enqueue(this.stoppedJob("restore: data plane stopped", [resolve])));
    if (this.lastGood) return this.submit(this.lastGood.config, { source: "restore" });
    if (this.interrupted) {
      const config = emptyDeviceConfig("none");
      return new Promise((resolve) =>
        this.enqueue({
          config,
          hash: configHash(config),
          source: "restore: tear down an interrupted first apply",
          waiters: [resolve],
          superseded: [],
          persist: false,
        }),
      );
    }
    return null;
  }

  /** Validates and queues a config; resolves when it (or the newer config that replaced it) finished. */
  submit(input: unknown, options: SubmitOptions): Promise<ReconcileOutcome> {
    const startedAt = new Date().toISOString();
    const refuse = (code: AgentErrorCode, message: string, hash: string | null): Promise<ReconcileOutcome> => {
      this.options.log.warn("config refused", { source: options.source, code, message });
      return Promise.resolve(
        this.outcome({ ok: false, hash, code, error: `${code}: ${message}`, source: options.source, startedAt }),
      );
    };
    const parsed = DeviceConfigSchema.safeParse(input);
    if (!parsed.success) return refuse("INVALID_CONFIG", formatIssues(parsed.error.issues), null);
    if (this.halted)
      return refuse("DATA_PLANE_STOPPED", "the data plane is stopped (a stop action): start it first", configHash(parsed.data));
    const hash = configHash(parsed.data);
    if (options.expectedHash !== undefined && options.expectedHash !== hash)
      return refuse("HASH_MISMATCH", `config hashes to ${hash}, message said ${options.expectedHash}`, options.expectedHash);
    const unrenderable = this.verify(parsed.data);
    if (unrenderable) return refuse(unrenderable.code, unrenderable.message, hash);

    return new Promise((resolve) =>
      this.enqueue({ config: parsed.data, hash, source: options.source, waiters: [resolve], superseded: [], persist: true }),
    );
  }

  /**
   * Every driver renders its section first (`plan`, pure): a section that
   * cannot be rendered refuses the whole config before any driver touches
   * the system, instead of failing half-way and rolling back.
   */
  private verify(config: DeviceConfig): { code: AgentErrorCode; message: string } | null {
    for (const driver of this.options.drivers) {
      try {
        driver.plan(config, this.ctx);
      } catch (err) {
        const code = err instanceof AgentError ? err.code : "INVALID_CONFIG";
        return { code, message: `${driver.name}: ${err instanceof Error ? err.message : String(err)}` };
      }
    }
    return null;
  }

  /** Latest wins: a job still queued is replaced, its waiters learn they were superseded. */
  private enqueue(job: Job): void {
    const previous = this.queued;
    if (previous) job.superseded.push(...previous.superseded, ...previous.waiters);
    this.queued = job;
    this.kick();
  }

  /** A driver saw the system change under it: apply the current config again once the loop is free. */
  requestReconcile(reason: string): void {
    this.reapplyReason = reason;
    this.kick();
  }

  /** Resolves when nothing is running or queued. */
  async idle(): Promise<void> {
    while (this.loop) await this.loop;
  }

  private kick(): void {
    if (this.loop) return;
    this.loop = this.drain().finally(() => {
      this.loop = null;
      // Work that arrived between the loop's last check and now (waiters run before this).
      if (this.queued || (this.reapplyReason !== null && this.lastGood)) this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      let job = this.queued;
      this.queued = null;
      if (!job && this.reapplyReason !== null && this.lastGood) {
        job = this.halted
          ? this.stoppedJob(`reapply (stopped): ${this.reapplyReason}`)
          : {
              config: this.lastGood.config,
              hash: this.lastGood.hash,
              source: `reapply: ${this.reapplyReason}`,
              waiters: [],
              superseded: [],
              persist: true,
            };
      }
      this.reapplyReason = null;
      if (!job) return;
      const outcome = await this.run(job);
      for (const w of job.waiters) w(outcome);
      for (const w of job.superseded)
        w({
          ...outcome,
          ok: false,
          superseded: true,
          drivers: [],
          rollback: [],
          error: `superseded by a newer config (${job.hash})`,
        });
    }
  }

  private async run(job: Job): Promise<ReconcileOutcome> {
    const { log, store, drivers } = this.options;
    const startedAt = new Date().toISOString();
    this.runningHash = job.hash;
    log.info("apply started", { hash: job.hash, source: job.source });
    try {
      await store.markPending(job.hash, job.source);
      const pass = await this.pass(job.config, job.hash, drivers);
      if (pass.failed === null) {
        if (job.persist) this.lastGood = await store.saveApplied(job.config, job.hash);
        this.interrupted = null;
        await store.clearPending();
        log.info("apply finished", { hash: job.hash, changed: pass.results.some((r) => r.changed) });
        return this.finish(this.outcome({ ok: true, hash: job.hash, drivers: pass.results, source: job.source, startedAt }));
      }
      const failed = pass.results[pass.results.length - 1];
      const reason = `${failed?.driver} failed: ${failed?.error}`;
      // Re-applying the last good config itself failed: there is nothing better to roll back to.
      if (this.lastGood?.hash === job.hash) {
        await store.clearPending();
        log.error("re-applying the last good config failed", { hash: job.hash, error: reason });
        return this.finish(
          this.outcome({
            ok: false,
            hash: job.hash,
            drivers: pass.results,
            code: "DRIVER_FAILED",
            error: reason,
            source: job.source,
            startedAt,
          }),
        );
      }
      const target = this.lastGood?.config ?? emptyDeviceConfig(job.config.deviceId);
      const targetHash = this.lastGood?.hash ?? null;
      log.warn("apply failed; rolling back", { hash: job.hash, error: reason, to: targetHash ?? "empty config" });
      const back = await this.pass(target, targetHash ?? configHash(target), drivers.slice(0, pass.results.length));
      await store.clearPending();
      const rollbackError =
        back.failed === null ? "" : `; rollback failed too: ${back.results.at(-1)?.driver}: ${back.results.at(-1)?.error}`;
      if (rollbackError) log.error("rollback failed", { error: rollbackError });
      return this.finish(
        this.outcome({
          ok: false,
          hash: job.hash,
          drivers: pass.results,
          rollback: back.results,
          rolledBack: true,
          // After a failed rollback nobody knows what is applied.
          appliedHash: back.failed === null ? targetHash : null,
          code: "DRIVER_FAILED",
          error: `${reason}${rollbackError}`,
          source: job.source,
          startedAt,
        }),
      );
    } catch (err) {
      // The store itself failed (disk full, read-only): nothing was half-applied by a driver, report it.
      log.error("apply aborted", { error: describeError(err) });
      return this.finish(
        this.outcome({
          ok: false,
          hash: job.hash,
          code: "INTERNAL",
          error: `INTERNAL: ${describeError(err)}`,
          source: job.source,
          startedAt,
        }),
      );
    } finally {
      this.runningHash = null;
    }
  }

  /** Runs `drivers` in order until one throws. */
  private async pass(
    config: DeviceConfig,
    hash: string,
    drivers: Driver[],
  ): Promise<{ results: DriverResult[]; failed: string | null }> {
    const results: DriverResult[] = [];
    for (const driver of drivers) {
      const t0 = performance.now();
      let result: DriverResult;
      try {
        const { changed } = await driver.apply(config, this.ctx);
        result = { driver: driver.name, ok: true, changed, durationMs: Math.round(performance.now() - t0) };
      } catch (err) {
        result = {
          driver: driver.name,
          ok: false,
          changed: true,
          durationMs: Math.round(performance.now() - t0),
          error: describeError(err),
        };
      }
      results.push(result);
      this.driverStates.set(driver.name, { ...result, at: new Date().toISOString(), hash });
      this.options.observer?.driverFinished?.(result);
      if (!result.ok) return { results, failed: driver.name };
    }
    return { results, failed: null };
  }

  private outcome(
    o: Partial<ReconcileOutcome> & Pick<ReconcileOutcome, "ok" | "hash" | "source" | "startedAt">,
  ): ReconcileOutcome {
    return {
      appliedHash: this.appliedHash,
      rolledBack: false,
      superseded: false,
      drivers: [],
      rollback: [],
      finishedAt: new Date().toISOString(),
      ...o,
    };
  }

  private finish(outcome: ReconcileOutcome): ReconcileOutcome {
    this.lastOutcome = outcome;
    this.options.observer?.applyFinished?.(outcome);
    return outcome;
  }
}
