/**
 * Raising and resolving on behalf of the rule engine, with what follows:
 * the `tern_notifications_raised_total` counter and the deliveries. A new
 * notification, or one whose severity rose, is announced to the channels its
 * rule asks for (`immediateEmail` → the organization's e-mail recipients,
 * `sendWebHook` → its webhook; each channel's own minimum severity applies);
 * a resolved one is announced when the rule has `resolvedAlert`. A repeat of
 * an open condition only counts. Announcements go to the Deliverer's bounded
 * queue: nothing here waits for SMTP or HTTP.
 */
import type { Notification } from "@tern/protocol";
import type { Logger } from "pino";
import { GroupCommit } from "../db/group-commit.ts";
import type { Db } from "../db/schema.ts";
import type { ServerMetrics } from "../metrics/server-metrics.ts";
import { type RaiseNotificationInput, raiseNotification, resolveNotificationsMany } from "../services/notifications/events.ts";
import type { Deliverer, DeliveryEvent } from "./delivery/index.ts";
import type { SettingsCache } from "./settings-cache.ts";

/** A delivery to make once the change that produced it has committed. */
export interface Announcement {
  event: Extract<DeliveryEvent, "notification.raised" | "notification.resolved">;
  notification: Notification;
  orgId: string;
  deviceName?: string;
}

type ResolveBatch = GroupCommit<{ orgId: string; dedupKeys: readonly string[] }, Notification[]>;

export class Notifier {
  /**
   * Resolves through the same database handle go out together (one statement
   * for the devices of a reconnecting fleet); a transaction's handle gets its
   * own queue, so its resolves stay inside it.
   */
  private readonly resolves = new WeakMap<Db, ResolveBatch>();

  constructor(
    private readonly deliverer: Deliverer,
    private readonly settings: SettingsCache,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
  ) {}

  /** Raises (or repeats) a condition; returns the announcement to make when it is new or escalated. */
  async raise(db: Db, orgId: string, input: RaiseNotificationInput, deviceName?: string): Promise<Announcement | null> {
    const raised = await raiseNotification({ db, org: { id: orgId } }, input);
    this.metrics.notificationsRaised.inc({ event: input.eventType, severity: input.severity });
    if (!raised.created && !raised.escalated) return null;
    return { event: "notification.raised", notification: raised.notification, orgId, deviceName };
  }

  /** Resolves a condition (by dedup key); returns the announcement when something was open. */
  async resolve(db: Db, orgId: string, key: string, deviceName?: string): Promise<Announcement | null> {
    return (await this.resolveAll(db, orgId, [key], async () => deviceName))[0] ?? null;
  }

  /**
   * Resolves several conditions (with other callers' in one statement); the device's name (for the messages) is looked
   * up only when something was open, since most resolves find nothing.
   */
  async resolveAll(
    db: Db,
    orgId: string,
    keys: readonly string[],
    deviceName: () => Promise<string | undefined>,
  ): Promise<Announcement[]> {
    if (keys.length === 0) return [];
    let batch = this.resolves.get(db);
    if (!batch) {
      batch = new GroupCommit((items) => resolveNotificationsMany(db, items));
      this.resolves.set(db, batch);
    }
    const resolved = await batch.submit({ orgId, dedupKeys: keys });
    if (resolved.length === 0) return [];
    const name = await deviceName();
    return resolved.map((notification) => ({ event: "notification.resolved", notification, orgId, deviceName: name }));
  }

  /** Hands announcements to the Deliverer, per the notification's rule and the organization's channels. */
  async announce(announcements: readonly (Announcement | null)[]): Promise<void> {
    for (const a of announcements) {
      if (!a) continue;
      try {
        const settings = await this.settings.get(a.orgId);
        if (!settings) continue;
        const rule = settings.rules[a.notification.eventType];
        if (a.event === "notification.resolved" && !rule.resolvedAlert) continue;
        const email = rule.immediateEmail ? settings.email : null;
        const webhook =
          rule.sendWebHook && settings.webhook.secret !== null ? { ...settings.webhook, secret: settings.webhook.secret } : null;
        if (!email?.enabled && !webhook?.enabled) continue;
        this.deliverer.enqueue({
          event: a.event,
          orgId: a.orgId,
          notification: a.notification,
          channels: { email, webhook },
          context: { organizationName: settings.orgName, deviceName: a.deviceName },
        });
      } catch (err) {
        this.logger.error({ err, notificationId: a.notification.id }, "could not announce a notification");
      }
    }
  }
}
