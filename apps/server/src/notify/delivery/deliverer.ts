/**
 * The Deliverer sends one notification to an organization's channels (e-mail,
 * webhook) with retries, and never throws into its caller: every outcome is a
 * result, every attempt goes to the delivery log, and `enqueue` returns at
 * once so the stats ingestion that raised the notification is never held up.
 */
import { randomUUID } from "node:crypto";
import type { Severity } from "@tern/protocol";
import { SmtpSender } from "./email.ts";
import { renderEmail } from "./email-content.ts";
import { runWithRetries } from "./retry.ts";
import {
  type AttemptOutcome,
  DEFAULT_RETRY,
  type DeliveryAttempt,
  type DeliveryLog,
  type DeliveryLogger,
  type DeliveryRequest,
  type DeliveryResult,
  type RetryPolicy,
  type SmtpSettings,
} from "./types.ts";
import { postWebhook } from "./webhook.ts";
import { PUBLIC_ONLY, type WebhookTargetPolicy, webhookDispatcher } from "./webhook-target.ts";

export interface DelivererOptions {
  /** SMTP server; without it e-mail deliveries are skipped with a reason. */
  smtp?: SmtpSettings | null;
  log?: DeliveryLog;
  logger?: DeliveryLogger;
  retry?: Partial<RetryPolicy>;
  /** Time-out of one webhook attempt (default 10 s). */
  webhookTimeoutMs?: number;
  /** Deliveries run at most this many at a time (default 8). */
  concurrency?: number;
  /** Queued deliveries beyond this are dropped and logged as failed (default 1000): memory stays bounded in a storm. */
  maxQueued?: number;
  userAgent?: string;
  /** Addresses webhooks may reach (default: public unicast only; see webhook-target.ts). */
  webhookTargets?: WebhookTargetPolicy;
  /** For tests: the random source of the jitter, the sleep between attempts and the clock. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
}

const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };
const silent: DeliveryLogger = { warn() {}, error() {} };

export class Deliverer {
  readonly #smtp: SmtpSender | null;
  readonly #log: DeliveryLog | undefined;
  readonly #logger: DeliveryLogger;
  readonly #retry: RetryPolicy;
  readonly #webhookTimeoutMs: number;
  readonly #concurrency: number;
  readonly #maxQueued: number;
  readonly #userAgent: string;
  readonly #target: { policy: WebhookTargetPolicy; dispatcher: ReturnType<typeof webhookDispatcher> };
  readonly #random: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => Date;
  #running = 0;
  readonly #queue: (() => Promise<void>)[] = [];
  readonly #idleWaiters: (() => void)[] = [];

  constructor(options: DelivererOptions = {}) {
    this.#smtp = options.smtp ? new SmtpSender(options.smtp) : null;
    this.#log = options.log;
    this.#logger = options.logger ?? silent;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#webhookTimeoutMs = options.webhookTimeoutMs ?? 10_000;
    this.#concurrency = options.concurrency ?? 8;
    this.#maxQueued = options.maxQueued ?? 1000;
    this.#userAgent = options.userAgent ?? "tern-notifications/1";
    const policy = options.webhookTargets ?? PUBLIC_ONLY;
    this.#target = { policy, dispatcher: webhookDispatcher(policy) };
    this.#random = options.random ?? Math.random;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#now = options.now ?? (() => new Date());
  }

  /** Delivers to every enabled channel whose severity threshold the notification meets. Never rejects. */
  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    try {
      return await Promise.all([this.#email(request), this.#webhook(request)]).then((r) => r.filter((x) => x !== null));
    } catch (err) {
      // Only a bug gets here (the channels catch their own errors); the caller must still not see it.
      this.#logger.error({ err }, "notification delivery failed unexpectedly");
      return [];
    }
  }

  /** Starts a delivery in the background and returns at once; `idle()` waits for it. */
  enqueue(request: DeliveryRequest): void {
    if (this.#queue.length >= this.#maxQueued) {
      this.#logger.error({ notificationId: request.notification?.id ?? null }, "notification delivery queue full; dropped");
      void this.#dropped(request);
      return;
    }
    this.#queue.push(async () => {
      await this.deliver(request);
    });
    this.#pump();
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.#running === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Waits for queued deliveries, then closes the SMTP transport and the webhooks' connections. */
  async close(): Promise<void> {
    await this.idle();
    this.#smtp?.close();
    await this.#target.dispatcher.close();
  }

  #pump(): void {
    while (this.#running < this.#concurrency && this.#queue.length > 0) {
      const job = this.#queue.shift() as () => Promise<void>;
      this.#running++;
      void job().finally(() => {
        this.#running--;
        this.#pump();
        if (this.#running === 0 && this.#queue.length === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
      });
    }
  }

  #skipReason(channel: { enabled: boolean; minSeverity: Severity }, request: DeliveryRequest): string | null {
    if (!channel.enabled) return "channel disabled";
    const n = request.notification;
    if (request.event !== "test" && n && SEVERITY_RANK[n.severity] < SEVERITY_RANK[channel.minSeverity])
      return `severity ${n.severity} is below the channel's minimum ${channel.minSeverity}`;
    return null;
  }

  async #email(request: DeliveryRequest): Promise<DeliveryResult | null> {
    const channel = request.channels.email;
    if (!channel) return null;
    const deliveryId = randomUUID();
    const target = channel.recipients.join(", ");
    const skip =
      this.#skipReason(channel, request) ??
      (channel.recipients.length === 0 ? "no recipients" : this.#smtp === null ? "no SMTP server configured" : null);
    if (skip !== null) return { deliveryId, channel: "email", target, status: "skipped", attempts: 0, error: skip };
    const content = renderEmail(request.event, request.notification, request.context);
    const smtp = this.#smtp as SmtpSender;
    return this.#attempts(request, deliveryId, "email", target, () =>
      smtp.send(channel.recipients, content, `<${deliveryId}@tern.invalid>`),
    );
  }

  async #webhook(request: DeliveryRequest): Promise<DeliveryResult | null> {
    const channel = request.channels.webhook;
    if (!channel) return null;
    const deliveryId = randomUUID();
    const skip = this.#skipReason(channel, request) ?? (channel.url === "" ? "no URL configured" : null);
    if (skip !== null)
      return { deliveryId, channel: "webhook", target: channel.url, status: "skipped", attempts: 0, error: skip };
    return this.#attempts(request, deliveryId, "webhook", channel.url, () =>
      postWebhook({
        url: channel.url,
        secret: channel.secret,
        deliveryId,
        event: request.event,
        notification: request.notification,
        timeoutMs: this.#webhookTimeoutMs,
        userAgent: this.#userAgent,
        now: this.#now(),
        target: this.#target,
      }),
    );
  }

  async #attempts(
    request: DeliveryRequest,
    deliveryId: string,
    channel: "email" | "webhook",
    target: string,
    run: () => Promise<AttemptOutcome>,
  ): Promise<DeliveryResult> {
    const notificationId = request.notification?.id ?? null;
    const { outcome, attempts } = await runWithRetries(
      async () => {
        try {
          return await run();
        } catch (err) {
          return { ok: false, retryable: false, responseCode: null, error: `unexpected: ${(err as Error).message}` };
        }
      },
      this.#retry,
      {
        random: this.#random,
        sleep: this.#sleep,
        onAttempt: async (attempt, o, durationMs, willRetry) => {
          const status = o.ok ? "delivered" : willRetry ? "retrying" : "failed";
          const error = o.ok ? (o.note ?? null) : o.error;
          if (!o.ok)
            this.#logger.warn({ deliveryId, channel, target, attempt, error }, `notification ${channel} attempt ${status}`);
          await this.#record({
            deliveryId,
            orgId: request.orgId ?? null,
            channel,
            target,
            event: request.event,
            notificationId,
            attempt,
            status,
            responseCode: o.responseCode,
            error,
            durationMs,
            at: this.#now(),
          });
        },
      },
    );
    if (!outcome.ok)
      this.#logger.error({ deliveryId, channel, target, attempts, error: outcome.error }, `notification ${channel} failed`);
    return {
      deliveryId,
      channel,
      target,
      status: outcome.ok ? "delivered" : "failed",
      attempts,
      error: outcome.ok ? (outcome.note ?? null) : outcome.error,
    };
  }

  /** Logs a delivery dropped by a full queue as one failed attempt per configured channel. */
  async #dropped(request: DeliveryRequest): Promise<void> {
    const targets: ["email" | "webhook", string][] = [];
    if (request.channels.email?.enabled) targets.push(["email", request.channels.email.recipients.join(", ")]);
    if (request.channels.webhook?.enabled) targets.push(["webhook", request.channels.webhook.url]);
    for (const [channel, target] of targets)
      await this.#record({
        deliveryId: randomUUID(),
        orgId: request.orgId ?? null,
        channel,
        target,
        event: request.event,
        notificationId: request.notification?.id ?? null,
        attempt: 0,
        status: "failed",
        responseCode: null,
        error: `delivery queue full (${this.#maxQueued} waiting); dropped`,
        durationMs: 0,
        at: this.#now(),
      });
  }

  async #record(attempt: DeliveryAttempt): Promise<void> {
    if (!this.#log) return;
    try {
      await this.#log.record(attempt);
    } catch (err) {
      this.#logger.error({ err, deliveryId: attempt.deliveryId }, "delivery log failed to record an attempt");
    }
  }
}
