/**
 * The notification rule engine of one server instance. It listens to the
 * gateway's events and turns them into notifications (raise, repeat, resolve)
 * and deliveries:
 *
 * - `status` → evaluate-status.ts, per link, in memory: each condition's state
 *   (conditions.ts) lives with the device's link on the instance that holds
 *   it. At the link's first status the device's open notifications are read,
 *   so a device that moved to this instance resolves what another raised.
 * - `device-connected` → resolves "device connection"; the raise after the
 *   grace period is a periodic duty (checks.ts), so it survives the instance
 *   that saw the link end.
 * - `jobs-finished` → "job failed" raised, or resolved (with "failed
 *   self-healing") when a job completes; `self-healing-failed` → raised.
 * - `vrrp-state-changed` → "VRRP state change" for transitions between known
 *   states (a router entering FAULT is critical whatever the rule says).
 *
 * A device's context (names, interfaces, tunnels, thresholds) is read once
 * per link and again when it applies a new config or a trigger says it
 * changed (`tern_context`), not on a timer.
 *
 * Listeners only touch memory; database work and deliveries go to a bounded
 * work queue (work-queue.ts), so the gateway's path never waits for them.
 */
import { NON_CONFIG_JOB_TYPES, type NotificationEvent, type Severity, type Status, type TunnelReport } from "@tern/protocol";
import type { Logger } from "pino";
import { GroupCommit } from "../db/group-commit.ts";
import type { AppDeps } from "../deps.ts";
import type { Bus } from "../gateway/bus.ts";
import type { Duty } from "../gateway/duties.ts";
import type { GatewayEventMap, GatewayEvents } from "../gateway/events.ts";
import { type NotificationCondition, notificationDedupKey } from "../services/notifications/events.ts";
import {
  checkDeviceConnections,
  checkPendingTunnels,
  PENDING_TUNNELS_PER_RUN,
  resolveOrphans,
  type TunnelSweep,
} from "./checks.ts";
import { type ConditionState, higher, isIdle, newCondition, observe, type Step } from "./conditions.ts";
import { Deliverer } from "./delivery/index.ts";
import { webhookTargetPolicy } from "./delivery/webhook-target.ts";
import { databaseDeliveryLog, deleteOldDeliveries } from "./delivery-log.ts";
import { type DeviceContext, type DeviceRef, loadDeviceContexts } from "./device-context.ts";
import { evaluateStatus } from "./evaluate-status.ts";
import { FarEnds } from "./far-ends.ts";
import { type Announcement, Notifier } from "./notifier.ts";
import { loadOpenConditions } from "./open-conditions.ts";
import { SettingsCache } from "./settings-cache.ts";
import { smtpSettings } from "./smtp.ts";
import { WorkQueue } from "./work-queue.ts";

/**
 * A device's context is read again when it applies a new config, when a trigger says what it holds changed
 * (`tern_context`: names, thresholds), after the bus reconnects, and at the latest after this long.
 */
const CONTEXT_TTL_MS = 10 * 60_000;
/** Pending notification work past which a warning is logged (nothing is dropped: work-queue.ts). */
const WARN_PENDING_WORK = 10_000;
/** Waiting tasks of a device past which its statuses are held back and only the newest is evaluated. */
const STATUS_BACKLOG = 2;
/**
 * Devices whose database work runs at once. Their look-ups (context, open
 * notifications, far ends, resolves) are batched across devices, so this is
 * also how many devices of a reconnecting fleet share one statement; what
 * is not batched (a raise) takes a pool connection each, so keep it modest.
 */
const WORK_CONCURRENCY = 32;

/** A device's context and, at its link's first load, its open notifications of status-driven events. */
interface LoadedDevice {
  context: DeviceContext | null;
  open: { dedup_key: string; event_type: string; severity: Severity }[];
}

interface TrackedCondition {
  eventType: NotificationEvent;
  state: ConditionState;
}

/** One device whose link this instance holds. */
interface DeviceTrack {
  orgId: string;
  context: DeviceContext | null;
  loading: boolean;
  /** What the context holds changed since it was read (or since its read began): read it again. */
  changed: boolean;
  /** The newest status that waits for the context. */
  waiting: GatewayEventMap["status"] | null;
  /** The newest status held back while the device's earlier work waits (back-pressure). */
  deferred: GatewayEventMap["status"] | null;
  appliedHash: string | null;
  /** Conditions not idle; NO_CONDITIONS (shared, never written) until the device has one. */
  conditions: Map<string, TrackedCondition>;
}

/** Most devices have no open condition: they share this empty map (`ownConditions` replaces it before a write). */
const NO_CONDITIONS: ReadonlyMap<string, TrackedCondition> = new Map();

function ownConditions(track: DeviceTrack): Map<string, TrackedCondition> {
  if (track.conditions === NO_CONDITIONS) track.conditions = new Map();
  return track.conditions;
}

export interface NotificationEngineOptions {
  confirmReports: number;
  /** How long a figure judged on evidence must hold before it raises or resolves. */
  sustainMs: number;
  pendingTunnelGraceMs: number;
  dutyIntervalMs: number;
  deliveryLogRetentionDays: number;
}

export class NotificationEngine {
  readonly deliverer: Deliverer;
  readonly work: WorkQueue;
  readonly settings: SettingsCache;
  private readonly notifier: Notifier;
  private readonly devices = new Map<string, DeviceTrack>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly logger: Logger;
  private readonly options: NotificationEngineOptions;
  private readonly farEnds: FarEnds;
  /** Where this instance's pending-tunnel sweep goes on (null: from the first tunnel, at the next interval). */
  private pendingSweep: TunnelSweep | null = null;
  private readonly loads = new GroupCommit<DeviceRef & { first: boolean }, LoadedDevice>((refs) => this.loadMany(refs));

  constructor(private readonly deps: AppDeps) {
    const config = deps.config;
    this.logger = deps.logger.child({ component: "notifications" });
    this.options = {
      confirmReports: config.TERN_NOTIFY_CONFIRM_REPORTS,
      sustainMs: config.TERN_NOTIFY_SUSTAIN_S * 1000,
      pendingTunnelGraceMs: config.TERN_PENDING_TUNNEL_ALERT_S * 1000,
      dutyIntervalMs: config.TERN_DUTY_INTERVAL_MS,
      deliveryLogRetentionDays: config.TERN_DELIVERY_LOG_RETENTION_DAYS,
    };
    this.deliverer = new Deliverer({
      smtp: smtpSettings(config),
      log: databaseDeliveryLog(deps.db, deps.metrics, this.logger),
      logger: this.logger,
      retry: { maxAttempts: config.TERN_NOTIFY_RETRY_ATTEMPTS, baseDelayMs: config.TERN_NOTIFY_RETRY_BASE_MS },
      webhookTargets: webhookTargetPolicy(config),
    });
    this.work = new WorkQueue(this.logger, { concurrency: WORK_CONCURRENCY, warnPending: WARN_PENDING_WORK });
    this.settings = new SettingsCache(deps.db, deps.keyring);
    this.notifier = new Notifier(this.deliverer, this.settings, deps.metrics, this.logger);
    this.farEnds = new FarEnds(
      deps.db,
      (key, work) => this.work.push(key, work),
      // Read at each call: the gateway becomes deps.deviceLink after the engine is made.
      (deviceId) => this.deps.deviceLink.isConnectedHere(deviceId),
    );
  }

  /** Subscribes to the gateway's events, and to changes of what device contexts hold on `bus`. */
  start(events: GatewayEvents, bus: Pick<Bus, "on" | "onReconnect">): void {
    bus.on("tern_context", (payload) => this.contextsChanged(payload === "*" ? null : payload.split(",")));
    // Changes sent while the bus was away are not heard: every context may be stale.
    bus.onReconnect(() => this.contextsChanged(null));
    this.unsubscribe.push(
      events.on("status", (e) => this.onStatus(e)),
      events.on("device-connected", (e) => this.onConnected(e)),
      events.on("device-disconnected", (e) => {
        this.devices.delete(e.deviceId);
        this.farEnds.forget(e.deviceId);
      }),
      events.on("jobs-finished", (e) => this.onJobsFinished(e)),
      events.on("self-healing-failed", (e) => this.onSelfHealingFailed(e)),
      events.on("vrrp-state-changed", (e) => this.onVrrpChanged(e)),
      events.on("identity-conflict", (e) => this.onIdentityConflict(e)),
    );
  }

  /** The periodic duties the gateway runs once per interval across instances. */
  duties(): Duty[] {
    const checkMs = Math.max(this.options.dutyIntervalMs, Math.min(30_000, this.options.pendingTunnelGraceMs / 2));
    return [
      {
        name: "device-connection-alerts",
        run: async (trx, afterCommit) => {
          const announcements = await checkDeviceConnections(trx, this.notifier);
          afterCommit(() => this.announceLater(announcements));
        },
      },
      {
        name: "pending-tunnel-alerts",
        intervalMs: checkMs,
        run: async (trx, afterCommit) => {
          // Alerts of deleted tunnels and groups: once a sweep, at its start (it reads every open alert).
          if (!this.pendingSweep) await resolveOrphans(trx);
          // A slice per run, the next AGAIN_DELAY_MS later on this instance (gateway/duties.ts), so PGlite's one connection is never held long.
          const { announcements, next } = await checkPendingTunnels(
            trx,
            this.notifier,
            this.options.pendingTunnelGraceMs,
            PENDING_TUNNELS_PER_RUN,
            this.pendingSweep,
          );
          afterCommit(() => {
            this.pendingSweep = next;
            this.announceLater(announcements);
          });
          return next ? "again" : undefined;
        },
      },
      {
        name: "delivery-log-retention",
        intervalMs: Math.max(this.options.dutyIntervalMs, 3_600_000),
        run: async (trx) => {
          await deleteOldDeliveries(trx, this.options.deliveryLogRetentionDays);
        },
      },
    ];
  }

  /** Resolves when every queued raise, resolve and delivery is done (tests). */
  async idle(): Promise<void> {
    await this.work.idle();
    await this.deliverer.idle();
  }

  /** Stops listening, finishes queued work for up to `graceMs`, closes the SMTP transport. */
  async close(graceMs = 5_000): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    this.farEnds.close();
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), graceMs).unref());
    const done = await Promise.race([this.idle().then(() => "done" as const), timeout]);
    if (done === "timeout")
      this.logger.warn({ pending: this.work.size }, "notification work still pending at shutdown: not delivered");
    // Deliveries still retrying are abandoned (their attempts so far are logged).
    void this.deliverer.close();
  }

  // ---- status ----

  private track(deviceId: string, orgId: string): DeviceTrack {
    let t = this.devices.get(deviceId);
    if (!t) {
      t = {
        orgId,
        context: null,
        loading: false,
        changed: false,
        waiting: null,
        deferred: null,
        appliedHash: null,
        conditions: NO_CONDITIONS as Map<string, TrackedCondition>,
      };
      this.devices.set(deviceId, t);
    }
    return t;
  }

  private onStatus(e: GatewayEventMap["status"]): void {
    const track = this.track(e.deviceId, e.orgId);
    const settings = this.settings.peek(e.orgId);
    // Known to be out of date (none yet, a change heard, a new config applied): the status waits for the read.
    const outdated = !track.context || track.changed || e.status.appliedHash !== track.appliedHash;
    if (outdated || !settings || Date.now() - track.context!.loadedAt > CONTEXT_TTL_MS) {
      track.appliedHash = e.status.appliedHash;
      this.load(e.deviceId, track);
    }
    if (outdated || !track.context || !settings) {
      track.waiting = e;
      return;
    }
    if (this.work.waiting(`device:${e.deviceId}`) >= STATUS_BACKLOG) {
      // The database is behind on this device: its newest status is evaluated when its turn comes.
      track.deferred = e;
      this.work.push(
        `device:${e.deviceId}`,
        async () => {
          const deferred = track.deferred;
          track.deferred = null;
          if (deferred && this.devices.get(e.deviceId) === track)
            this.evaluate(e.deviceId, track, deferred.tunnels, deferred.status);
        },
        "status",
      );
      return;
    }
    this.evaluate(e.deviceId, track, e.tunnels, e.status);
  }

  /** Reads the device's context (and at first its open notifications) and the organization's settings. */
  private load(deviceId: string, track: DeviceTrack): void {
    if (track.loading) return;
    track.loading = true;
    // A change heard from here on may not be in what this read sees: it marks the track again.
    track.changed = false;
    const first = track.context === null;
    this.work.push(`device:${deviceId}`, async () => {
      try {
        const [{ context, open }] = await Promise.all([
          this.loads.submit({ orgId: track.orgId, deviceId, first }),
          this.settings.get(track.orgId),
        ]);
        if (this.devices.get(deviceId) !== track || !context) return;
        for (const n of open) {
          if (!track.conditions.has(n.dedup_key))
            ownConditions(track).set(n.dedup_key, {
              eventType: n.event_type as NotificationEvent,
              state: newCondition(n.severity),
            });
        }
        track.context = context;
      } finally {
        track.loading = false;
      }
      const waiting = track.waiting;
      track.waiting = null;
      if (waiting && this.settings.peek(track.orgId)) this.evaluate(deviceId, track, waiting.tunnels, waiting.status);
    });
  }

  /** Marks the contexts of `deviceIds` (null: all) to be read again at their device's next status. */
  private contextsChanged(deviceIds: readonly string[] | null): void {
    if (deviceIds === null) {
      for (const track of this.devices.values()) track.changed = true;
      return;
    }
    for (const id of deviceIds) {
      const track = this.devices.get(id);
      if (track) track.changed = true;
    }
  }

  /** Contexts of devices loading together, with the open notifications of those loading for the first time. */
  private async loadMany(refs: (DeviceRef & { first: boolean })[]): Promise<LoadedDevice[]> {
    const contexts = await loadDeviceContexts(this.deps.db, refs);
    const firsts = refs.filter((r) => r.first).map((r) => r.deviceId);
    const open = await loadOpenConditions(this.deps.db, firsts);
    const openOf = new Map<string, LoadedDevice["open"]>();
    for (const n of open) {
      const key = `${n.organization_id}/${n.device_id}`;
      const list = openOf.get(key);
      if (list) list.push(n);
      else openOf.set(key, [n]);
    }
    return refs.map((r, i) => ({
      context: contexts[i]!,
      open: r.first ? (openOf.get(`${r.orgId}/${r.deviceId}`) ?? []) : [],
    }));
  }

  private evaluate(
    deviceId: string,
    track: DeviceTrack,
    tunnels: (TunnelReport & { side: "a" | "b" })[],
    status: Pick<Status, "interfaces" | "bgp" | "health">,
  ): void {
    const context = track.context;
    const settings = this.settings.peek(track.orgId);
    if (!context || !settings) return;
    const confirm = this.options.confirmReports;
    // Most devices have no open condition: their statuses need no key unless something is bad.
    const tracking = track.conditions.size > 0;
    const observations = evaluateStatus({
      context,
      rules: settings.rules,
      tunnels,
      status,
      ...(tracking ? { openOf: (key: string) => track.conditions.get(key)?.state.open ?? "ok" } : {}),
      confirmReports: confirm,
    });
    const seen = new Set<string>();
    const now = Date.now();
    // What this end says about a tunnel whose far device is not live waits (far-ends.ts).
    const farDown = new Set<string>();
    for (const t of context.tunnels.values())
      if (t.farDeviceId !== null && !this.farEnds.live(t.farDeviceId, now)) farDown.add(t.id);
    for (const o of observations) {
      if (o.condition.targets.tunnelId && farDown.has(o.condition.targets.tunnelId)) o.observed = "hold";
      // Nothing tracked and nothing bad: nothing to start, and nothing tracked to keep.
      if (!tracking && (o.observed === "ok" || o.observed === "hold")) continue;
      seen.add(o.key);
      let tracked = track.conditions.get(o.key);
      if (!tracked) {
        if (o.observed === "ok" || o.observed === "hold") continue;
        tracked = { eventType: o.condition.eventType, state: newCondition() };
        ownConditions(track).set(o.key, tracked);
      }
      // On evidence the sustain period is the confirmation; the report count adds nothing.
      const step = o.sustained
        ? observe(tracked.state, o.observed, o.raiseAfter, 1, { now, sustainMs: this.options.sustainMs })
        : observe(tracked.state, o.observed, o.raiseAfter, confirm);
      this.act(deviceId, track, o.key, step, () => ({ ...o.condition, details: o.details() }));
      if (isIdle(tracked.state)) track.conditions.delete(o.key);
    }
    // What the status no longer mentions (a deleted tunnel, a removed neighbor) is clear.
    for (const [key, tracked] of track.conditions) {
      if (seen.has(key)) continue;
      this.act(deviceId, track, key, observe(tracked.state, "ok", 1, confirm), () => null);
      if (isIdle(tracked.state)) track.conditions.delete(key);
    }
  }

  private act(
    deviceId: string,
    track: DeviceTrack,
    key: string,
    step: Step,
    what: () => (NotificationCondition & { details: string }) | null,
  ): void {
    if (!step) return;
    const orgId = track.orgId;
    const deviceName = track.context?.name;
    if (step.kind === "resolve") {
      // Resolving the same condition twice in a row does what once does: a waiting one is enough.
      this.runWrite(
        deviceId,
        track,
        async () => [await this.notifier.resolve(this.deps.db, orgId, key, deviceName)],
        `resolve:${key}`,
      );
      return;
    }
    const input = what();
    if (!input) return;
    const severity = step.severity;
    this.runWrite(deviceId, track, async () => [
      await this.notifier.raise(this.deps.db, orgId, { ...input, severity }, deviceName),
    ]);
  }

  /**
   * Queues a raise or resolve for the device `track` follows. One the database did not take (an error, a lost
   * connection) would leave the track saying a condition is open, or clear, when the database says otherwise, and
   * nothing would write it again until the condition changed. The track is dropped instead: the device's next
   * status reads it again from the database, open notifications included, and raises or resolves what is still due.
   */
  private runWrite(deviceId: string, track: DeviceTrack, write: () => Promise<(Announcement | null)[]>, tag?: string): void {
    this.run(
      deviceId,
      async () => {
        try {
          return await write();
        } catch (err) {
          if (this.devices.get(deviceId) === track) this.devices.delete(deviceId);
          throw err;
        }
      },
      tag,
    );
  }

  /** Queues database work for a device; its announcements are delivered after it. */
  private run(deviceId: string, work: () => Promise<(Announcement | null)[]>, tag?: string): void {
    this.work.push(
      `device:${deviceId}`,
      async () => {
        await this.notifier.announce(await work());
      },
      tag,
    );
  }

  private announceLater(announcements: Announcement[]): void {
    if (announcements.length === 0) return;
    this.work.push("announce", () => this.notifier.announce(announcements));
  }

  // ---- events that are not status ----

  private onConnected(e: GatewayEventMap["device-connected"]): void {
    // A new link starts from what the database holds (seeded at its first status).
    this.devices.delete(e.deviceId);
    this.farEnds.forget(e.deviceId);
    const key = notificationDedupKey({ eventType: "device-connection", targets: { deviceId: e.deviceId } });
    this.run(
      e.deviceId,
      () => this.notifier.resolveAll(this.deps.db, e.orgId, [key], () => this.deviceName(e.deviceId)),
      "resolve-connection",
    );
  }

  private onJobsFinished(e: GatewayEventMap["jobs-finished"]): void {
    const failed = e.jobs.filter((j) => j.state === "failed");
    // Only a config job's success says the device runs a config of ours again (an upgrade or a restart does not).
    const completed = e.jobs.filter(
      (j) => j.state === "complete" && !(NON_CONFIG_JOB_TYPES as readonly string[]).includes(j.type),
    );
    this.run(e.deviceId, async () => {
      if (failed.length > 0) {
        const name = await this.deviceName(e.deviceId);
        const rule = await this.rule(e.orgId, "job-failed");
        if (!rule?.enabled) return [];
        const first = failed[0]!;
        const drivers = (first.error?.drivers ?? []).filter((d) => !d.ok && d.error).map((d) => `${d.driver}: ${d.error}`);
        const what = `${failed.length === 1 ? `${/^[aeiou]/.test(first.type) ? "an" : "a"} ${first.type} job` : `${failed.length} jobs`} failed on ${name ?? e.deviceId}`;
        const why = first.error ? `: ${first.error.reason}: ${first.error.message}` : "";
        return [
          await this.notifier.raise(
            this.deps.db,
            e.orgId,
            {
              eventType: "job-failed",
              targets: { deviceId: e.deviceId },
              severity: rule.severity,
              details: `${what}${why}${drivers.length ? ` (${drivers.join("; ")})` : ""}`.slice(0, 2000),
            },
            name,
          ),
        ];
      }
      if (completed.length === 0) return [];
      // A completed job: the device runs a config of ours again.
      return this.notifier.resolveAll(
        this.deps.db,
        e.orgId,
        (["job-failed", "failed-self-healing"] as const).map((eventType) =>
          notificationDedupKey({ eventType, targets: { deviceId: e.deviceId } }),
        ),
        () => this.deviceName(e.deviceId),
      );
    });
  }

  private onSelfHealingFailed(e: GatewayEventMap["self-healing-failed"]): void {
    this.run(e.deviceId, async () => {
      const rule = await this.rule(e.orgId, "failed-self-healing");
      if (!rule?.enabled) return [];
      const name = await this.deviceName(e.deviceId);
      return [
        await this.notifier.raise(
          this.deps.db,
          e.orgId,
          {
            eventType: "failed-self-healing",
            targets: { deviceId: e.deviceId },
            severity: rule.severity,
            details: `${e.attempts} automatic re-syncs did not bring ${name ?? e.deviceId} to its desired configuration (applied ${e.appliedHash ?? "none"}, desired ${e.desiredHash}); auto-sync is paused until the next change`,
          },
          name,
        ),
      ];
    });
  }

  private onVrrpChanged(e: GatewayEventMap["vrrp-state-changed"]): void {
    const changes = e.changes.filter((c) => c.from !== "unknown" && c.to !== "unknown");
    if (changes.length === 0) return;
    this.run(e.deviceId, async () => {
      const rule = await this.rule(e.orgId, "vrrp-state-change");
      if (!rule?.enabled) return [];
      const name = await this.deviceName(e.deviceId);
      const out: (Announcement | null)[] = [];
      for (const c of changes) {
        const severity: Severity = c.to === "FAULT" ? higher("critical", rule.severity) : rule.severity;
        out.push(
          await this.notifier.raise(
            this.deps.db,
            e.orgId,
            {
              eventType: "vrrp-state-change",
              targets: { deviceId: e.deviceId, vrrpGroupId: c.groupId },
              severity,
              details: `VRRP group ${c.groupName} on ${name ?? e.deviceId}: ${c.from} → ${c.to}`,
            },
            name,
          ),
        );
      }
      return out;
    });
  }

  /** Raised on each known device whose machine id was presented without its key (repeats count up). */
  private onIdentityConflict(e: GatewayEventMap["identity-conflict"]): void {
    for (const knownId of e.knownDeviceIds) {
      this.run(knownId, async () => {
        const rule = await this.rule(e.orgId, "device-identity-conflict");
        if (!rule?.enabled) return [];
        const name = await this.deviceName(knownId);
        return [
          await this.notifier.raise(
            this.deps.db,
            e.orgId,
            {
              eventType: "device-identity-conflict",
              targets: { deviceId: knownId },
              severity: rule.severity,
              details:
                `a registration from ${e.remote || "an unknown address"} (hostname ${e.hostname}) presented the machine id ${e.machineId} of ${name ?? knownId} without its key; it was not let in as ${name ?? knownId} and waits as the new pending device ${e.deviceId}. If it is the same router on a new disk: delete the new device, reset the identity of ${name ?? knownId} (POST /api/devices/${knownId}/identity/reset) and register the router again. Otherwise delete the new device and keep the registration token away from it.`.slice(
                  0,
                  2000,
                ),
            },
            name,
          ),
        ];
      });
    }
  }

  private async rule(orgId: string, event: NotificationEvent) {
    return (await this.settings.get(orgId))?.rules[event] ?? null;
  }

  private async deviceName(deviceId: string): Promise<string | undefined> {
    const known = this.devices.get(deviceId)?.context?.name;
    if (known) return known;
    const row = await this.deps.db.selectFrom("devices").select("name").where("id", "=", deviceId).executeTakeFirst();
    return row?.name;
  }
}
