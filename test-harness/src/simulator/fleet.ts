/**
 * A fleet of simulated devices in one process. The fleet owns what would
 * cost memory per device if each had its own: one status scheduler, one event
 * bus with waiters indexed by device, the shared default metrics.
 */
import { randomUUID } from "node:crypto";
import type { Agent } from "node:http";
import { type ApprovalOutcome, approveDevices } from "./approve.ts";
import { type FleetContext, SimDevice } from "./device.ts";
import { mapLimit } from "./limit.ts";
import { validateMetrics } from "./metrics.ts";
import { resolveOptions, type SimulatorInput } from "./options.ts";
import { registrationAgent } from "./register.ts";
import type { ApplyBehaviour, SimEvent, SimEventType, SimulatorOptions, TunnelMetricsInput } from "./types.ts";

interface Waiter {
  types: readonly SimEventType[];
  filter: ((e: SimEvent) => boolean) | undefined;
  resolve: (e: SimEvent) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** Counts over the fleet, for progress lines and tests. */
export interface FleetStats {
  devices: number;
  registered: number;
  approved: number;
  ready: number;
  connecting: number;
  closed: number;
  statusSent: number;
  statusSkipped: number;
  applied: number;
  failures: number;
}

export class Simulator implements FleetContext {
  readonly options: SimulatorOptions;
  readonly startedAt = performance.now();
  readonly syntheticTunnelIds: readonly string[];
  readonly devices: SimDevice[];
  /** Errors of devices that failed to register or connect (with failFast off). */
  readonly failures: { device: number; error: string }[] = [];

  private metrics: { input: TunnelMetricsInput; since: number };
  private readonly waiters = new Map<number | null, Set<Waiter>>();
  private readonly listeners = new Set<(e: SimEvent) => void>();
  private scheduler: NodeJS.Timeout | null = null;
  private agent: Agent | null = null;
  private stopped = false;

  private constructor(options: SimulatorOptions) {
    this.options = options;
    this.metrics = { input: options.metrics, since: this.startedAt };
    this.syntheticTunnelIds = Array.from({ length: options.syntheticTunnels }, () => randomUUID());
    this.devices = Array.from({ length: options.count }, (_, i) => new SimDevice(options.startIndex + i, this));
  }

  /** A fleet that has not touched the network yet: call `registerAll()` and `connectAll()`. */
  static create(input: SimulatorInput): Simulator {
    return new Simulator(resolveOptions(input));
  }

  /** Registers `count` devices and (unless `connect: false`) connects them all; resolves when all are welcomed. */
  static async start(input: SimulatorInput): Promise<Simulator> {
    const fleet = Simulator.create(input);
    try {
      await fleet.registerAll();
      if (fleet.options.admin) await fleet.approveAll();
      if (fleet.options.connect) await fleet.connectAll();
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  get size(): number {
    return this.devices.length;
  }

  /** Device at position `i` (0-based within this process). */
  device(i: number): SimDevice {
    const d = this.devices[i];
    if (d === undefined) throw new RangeError(`no device ${i}: the fleet has ${this.devices.length}`);
    return d;
  }

  /** Registers every device not registered yet, then closes the registration connections. */
  async registerAll(): Promise<void> {
    try {
      await this.each(
        this.devices.filter((d) => d.state === "new"),
        (d) => d.register(),
      );
    } finally {
      this.closeRegistrationAgent();
    }
  }

  /**
   * Approves every registered device not approved yet with the bulk approval call (needs `admin`).
   * A device the server refuses stays unapproved and is listed in `failures` with the refusal's code.
   */
  async approveAll(): Promise<ApprovalOutcome> {
    const admin = this.options.admin;
    if (!admin) throw new Error("approveAll needs the simulator option admin (an administrator's credentials)");
    const pending = this.devices.filter((d) => d.deviceId !== null && !d.approved);
    const outcome = await approveDevices(
      this.options.server,
      admin,
      pending.map((d) => d.deviceId!),
    );
    const byId = new Map(pending.map((d) => [d.deviceId!, d]));
    for (const id of [...outcome.approved, ...outcome.alreadyApproved]) byId.get(id)!.approved = true;
    for (const r of outcome.refused) this.failures.push({ device: byId.get(r.id)!.index, error: `approval refused: ${r.code}` });
    return outcome;
  }

  registrationAgent(): Agent {
    this.agent ??= registrationAgent(this.options.server, this.options.concurrency);
    return this.agent;
  }

  private closeRegistrationAgent(): void {
    this.agent?.destroy();
    this.agent = null;
  }

  /** Connects every registered device that is not connected; starts the status scheduler. */
  async connectAll(): Promise<void> {
    this.startScheduler();
    await this.each(
      this.devices.filter((d) => d.deviceId !== null && !d.ready),
      (d) => d.connect(),
    );
  }

  async disconnectAll(): Promise<void> {
    await mapLimit(this.devices, this.options.concurrency, (d) => d.disconnect());
  }

  /** Figures for every device that has no override of its own; scripts start counting now. */
  setTunnelMetrics(input: TunnelMetricsInput): void {
    validateMetrics(input);
    this.metrics = { input, since: performance.now() };
  }

  fleetMetrics(): { input: TunnelMetricsInput; since: number } {
    return this.metrics;
  }

  /** Changes how devices without an override of their own answer `apply`. */
  setApplyBehaviour(behaviour: Partial<ApplyBehaviour>): void {
    const merged = { ...this.options.apply, ...behaviour };
    resolveOptions({ ...this.options, apply: merged });
    this.options.apply = merged;
  }

  /** Listens to every event; returns the function that stops listening. */
  on(listener: (e: SimEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: SimEvent): void {
    this.options.onEvent?.(event);
    for (const l of this.listeners) l(event);
    this.settle(event.device, event);
    this.settle(null, event);
  }

  /**
   * Resolves at the next event of `type` (one of several types) from
   * `device` (null: any device) that passes `filter`; rejects after `timeoutMs`.
   */
  waitFor(
    type: SimEventType | readonly SimEventType[],
    device: number | null = null,
    timeoutMs = 10_000,
    filter?: (e: SimEvent) => boolean,
  ): Promise<SimEvent> {
    const types = typeof type === "string" ? [type] : type;
    return new Promise<SimEvent>((resolve, reject) => {
      let set = this.waiters.get(device);
      if (set === undefined) {
        set = new Set();
        this.waiters.set(device, set);
      }
      const bucket = set;
      const waiter: Waiter = {
        types,
        filter,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.drop(device, bucket, waiter);
          const who = device === null ? "any device" : `device ${device}`;
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${types.join("|")} from ${who}`));
        }, timeoutMs),
      };
      bucket.add(waiter);
    });
  }

  /** Resolves once `predicate` holds (checked every `pollMs`); rejects after `timeoutMs`. */
  async waitUntil(predicate: (fleet: Simulator) => boolean, timeoutMs = 10_000, pollMs = 20): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!predicate(this)) {
      if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for a fleet condition`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  stats(): FleetStats {
    const s: FleetStats = {
      devices: this.devices.length,
      registered: 0,
      approved: 0,
      ready: 0,
      connecting: 0,
      closed: 0,
      statusSent: 0,
      statusSkipped: 0,
      applied: 0,
      failures: this.failures.length,
    };
    for (const d of this.devices) {
      if (d.deviceId !== null) s.registered++;
      if (d.approved) s.approved++;
      if (d.state === "ready") s.ready++;
      else if (d.state === "connecting" || d.state === "open") s.connecting++;
      else if (d.state === "closed") s.closed++;
      if (d.appliedHash !== null) s.applied++;
      s.statusSent += d.statusSent;
      s.statusSkipped += d.statusSkipped;
    }
    return s;
  }

  /** Closes every connection, stops the scheduler and rejects pending waiters. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.scheduler) clearInterval(this.scheduler);
    this.scheduler = null;
    await Promise.race([this.disconnectAll().catch(() => undefined), new Promise((r) => setTimeout(r, 5000).unref())]);
    for (const d of this.devices) d.drop();
    this.closeRegistrationAgent();
    for (const [device, set] of this.waiters) {
      for (const w of set) {
        this.drop(device, set, w);
        w.reject(new Error("simulator stopped"));
      }
    }
  }

  private async each(devices: SimDevice[], fn: (d: SimDevice) => Promise<void>): Promise<void> {
    await mapLimit(devices, this.options.concurrency, async (d) => {
      try {
        await fn(d);
      } catch (err) {
        const error = (err as Error).message;
        if (this.options.failFast) throw err;
        this.failures.push({ device: d.position, error });
        this.emit({ device: d.position, type: "failed", at: performance.now(), reason: error });
      }
    });
  }

  private settle(key: number | null, event: SimEvent): void {
    const set = this.waiters.get(key);
    if (set === undefined) return;
    for (const w of set) {
      if (!w.types.includes(event.type) || (w.filter && !w.filter(event))) continue;
      this.drop(key, set, w);
      w.resolve(event);
    }
  }

  private drop(device: number | null, set: Set<Waiter>, w: Waiter): void {
    clearTimeout(w.timer);
    set.delete(w);
    if (set.size === 0 && this.waiters.get(device) === set) this.waiters.delete(device);
  }

  /** One timer for the whole fleet: each tick sends the status messages that are due. */
  private startScheduler(): void {
    if (this.scheduler !== null || this.stopped) return;
    const interval = Math.max(5, Math.min(50, Math.floor((this.options.statusIntervalMs ?? 1000) / 4)));
    this.scheduler = setInterval(() => {
      const now = performance.now();
      for (const d of this.devices) {
        if (d.nextStatusAt > now) continue;
        d.sendStatus();
        d.nextStatusAt += d.statusIntervalMs;
        // A device that fell behind (event loop stall) starts a fresh period rather than bursting.
        if (d.nextStatusAt <= now) d.nextStatusAt = now + d.statusIntervalMs;
      }
    }, interval);
  }
}
