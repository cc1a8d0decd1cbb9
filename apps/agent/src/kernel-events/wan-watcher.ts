/**
 * Watches the WAN interfaces of the applied config through the kernel's own
 * announcements: `ip monitor` events (debounced into batches of a few ms)
 * trigger one `ip -j addr show` (links with their addresses); WANs whose carrier
 * or address changed are handed to the listener. The first reading after
 * configure() sets the baseline silently, except for WANs already unusable.
 *
 * A WAN breaking is not debounced: the event itself says enough (a link line
 * without carrier, the deletion of the WAN's address), so it is handed over
 * as it arrives and the read that follows the burst only confirms or corrects
 * it (e.g. a secondary address promoted). Under load every spawned `ip` costs
 * tens of ms; this keeps one of them out of the 100 ms budget.
 */
import type { DeviceConfig } from "@tern/protocol";
import type { Runner, Spawner } from "../runner.ts";
import { EventBatcher } from "./debounce.ts";
import { IpMonitor } from "./ip-monitor.ts";
import { concernsWans } from "./monitor-line.ts";
import type { KernelEvent, WanChange, WanState } from "./types.ts";
import { changedWans, hasCarrier, parseWanStates } from "./wan-state.ts";

/** Quiet time that closes a batch, and the longest a batch may wait: a carrier loss is acted on at most this late. */
export const DEBOUNCE_MS = 5;
export const MAX_BATCH_MS = 20;

type Log = { warn(msg: string, f?: Record<string, unknown>): void };

export interface WanWatcherOptions {
  runner: Runner;
  spawner: Spawner;
  log?: Log;
  debounceMs?: number;
}

export type WanListener = (changes: WanChange[]) => void | Promise<void>;

export class WanWatcher {
  private wans = new Set<string>();
  private states = new Map<string, WanState>();
  private readonly monitor: IpMonitor;
  private readonly batcher: EventBatcher<KernelEvent>;
  private listeners: WanListener[] = [];
  /** Reads are serialised; a batch arriving meanwhile is read once after. */
  private reading: Promise<void> = Promise.resolve();
  private started = false;
  private log: Log | null;
  /** Bumped by every change taken from an event: a read that began before it is stale. */
  private generation = 0;

  constructor(private readonly options: WanWatcherOptions) {
    this.log = options.log ?? null;
    const quiet = options.debounceMs ?? DEBOUNCE_MS;
    this.batcher = new EventBatcher<KernelEvent>({ quietMs: quiet, maxWaitMs: Math.max(quiet, MAX_BATCH_MS) }, (items, at) => {
      if (items.some((e) => concernsWans(e, this.wans))) void this.read(at);
    });
    this.monitor = new IpMonitor({
      spawner: options.spawner,
      onEvent: (e) => {
        this.broke(e);
        this.batcher.push(e);
      },
      log: { warn: (m, f) => this.log?.warn(m, f) },
    });
  }

  /** The agent's logger, known only once `run` made it. */
  setLogger(log: Log): void {
    this.log = log;
  }

  onChange(listener: WanListener): void {
    this.listeners.push(listener);
  }

  /** Watches the WANs of `config` from now on (starts the monitor at the first call). */
  configure(config: DeviceConfig): void {
    const wans = new Set(config.interfaces.filter((i) => i.type === "WAN").map((i) => i.name));
    const same = wans.size === this.wans.size && [...wans].every((w) => this.wans.has(w));
    this.wans = wans;
    for (const k of this.states.keys()) if (!wans.has(k)) this.states.delete(k);
    if (!this.started) {
      this.started = true;
      this.monitor.start();
    } else if (!same) void this.read(performance.now());
  }

  /** The last reading of each watched WAN. */
  state(ifname: string): WanState | null {
    return this.states.get(ifname) ?? null;
  }

  get monitorRestarts(): number {
    return this.monitor.restarts;
  }

  /** A WAN that this one event shows unusable (carrier gone, its address deleted) is reported now. */
  private broke(e: KernelEvent): void {
    if (e.kind !== "link" && e.kind !== "address") return;
    const before = this.states.get(e.ifname);
    if (!before || !this.wans.has(e.ifname) || !before.carrier || before.address === null) return;
    let after: WanState | null = null;
    if (e.kind === "link" && (e.deleted || !hasCarrier({ flags: e.flags, operstate: e.state ?? "UNKNOWN" })))
      after = { ...before, carrier: false };
    else if (e.kind === "address" && e.family === "inet" && e.deleted && e.cidr.split("/")[0] === before.address)
      after = { ...before, address: null };
    if (!after) return;
    this.generation++;
    this.states.set(e.ifname, after);
    const change: WanChange = { ifname: e.ifname, before, after, seenAt: performance.now() };
    this.reading = this.reading.then(() => this.deliver([change]));
  }

  private read(seenAt: number): Promise<void> {
    this.reading = this.reading.then(() => this.readNow(seenAt));
    return this.reading;
  }

  private async readNow(seenAt: number): Promise<void> {
    const wans = [...this.wans];
    if (wans.length === 0) return;
    const generation = this.generation;
    let next: Map<string, WanState>;
    try {
      const r = await this.options.runner.run(["ip", "-j", "addr", "show"]);
      next = parseWanStates(r.stdout, wans);
    } catch (err) {
      this.log?.warn("could not read WAN state", { error: (err as Error).message });
      return;
    }
    // An event changed a WAN while this read ran: its own batch reads again after.
    if (generation !== this.generation) return;
    const changed = changedWans(this.states, next);
    const changes: WanChange[] = changed
      .map((after) => ({ ifname: after.ifname, before: this.states.get(after.ifname) ?? null, after, seenAt }))
      // A WAN seen for the first time is news only when it cannot carry traffic.
      .filter((c) => c.before !== null || !c.after.carrier || c.after.address === null);
    this.states = next;
    await this.deliver(changes);
  }

  private async deliver(changes: WanChange[]): Promise<void> {
    if (changes.length === 0) return;
    for (const l of this.listeners) {
      try {
        await l(changes);
      } catch (err) {
        this.log?.warn("WAN change handler failed", { error: (err as Error).message });
      }
    }
  }

  close(): void {
    this.batcher.cancel();
    this.monitor.stop();
  }
}
