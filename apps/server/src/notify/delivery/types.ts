/** Shapes shared by the delivery channels and the Deliverer; none of them touches the database. */
import type { Notification, Severity } from "@tern/protocol";

/** The events a delivery announces (the protocol's `WebhookPayload.event`). */
export type DeliveryEvent = "notification.raised" | "notification.resolved" | "test";

/** SMTP server settings, from the server configuration. */
export interface SmtpSettings {
  host: string;
  port: number;
  /** Implicit TLS from the first byte (usually port 465); otherwise STARTTLS is used when offered. */
  secure: boolean;
  /** Refuse to send unless STARTTLS succeeds (for `secure: false`). */
  requireTLS?: boolean;
  /** Verify the server certificate (default true; turn off only for lab servers with self-signed certificates). */
  rejectUnauthorized?: boolean;
  auth?: { user: string; pass: string };
  /** The From address, e.g. `"Tern alerts" <alerts@example.net>`. */
  from: string;
  /** Time-out of each connection, greeting and socket phase of one attempt (default 15 s). */
  timeoutMs?: number;
}

/** A webhook endpoint: the organization's URL and shared secret (the protocol's webhook configuration). */
export interface WebhookChannel {
  enabled: boolean;
  url: string;
  secret: string;
  minSeverity: Severity;
}

/** The e-mail channel of an organization (the protocol's `EmailConf`). */
export interface EmailChannel {
  enabled: boolean;
  recipients: readonly string[];
  minSeverity: Severity;
}

export interface DeliveryChannels {
  email?: EmailChannel | null;
  webhook?: WebhookChannel | null;
}

/** Names the notification's subjects for humans; ids alone make poor e-mail. */
export interface DeliveryContext {
  organizationName?: string;
  deviceName?: string;
  /** A link to the notification in the UI. */
  link?: string;
}

export interface DeliveryRequest {
  event: DeliveryEvent;
  /** The organization the delivery is for; carried into the delivery log. */
  orgId?: string | null;
  /** Null only for `test`. */
  notification: Notification | null;
  channels: DeliveryChannels;
  context?: DeliveryContext;
}

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The first back-off; doubled after each failure. */
  baseDelayMs: number;
  /** Cap of one back-off (and of a server's Retry-After). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 60_000 };

/** One attempt, as the delivery log (a database table later) records it. */
export interface DeliveryAttempt {
  deliveryId: string;
  /** The request's organization (null when the request named none). */
  orgId: string | null;
  channel: "email" | "webhook";
  /** The webhook URL, or the recipients joined with ", ". */
  target: string;
  event: DeliveryEvent;
  notificationId: string | null;
  /** 1-based. */
  attempt: number;
  /** `retrying`: this attempt failed and another will follow. */
  status: "delivered" | "retrying" | "failed";
  /** HTTP status of the webhook response, or the SMTP reply code. */
  responseCode: number | null;
  error: string | null;
  durationMs: number;
  at: Date;
}

/** Where attempts are recorded; the database layer implements it. Errors it throws are logged, never propagated. */
export interface DeliveryLog {
  record(attempt: DeliveryAttempt): void | Promise<void>;
}

export interface DeliveryResult {
  deliveryId: string;
  channel: "email" | "webhook";
  target: string;
  status: "delivered" | "failed" | "skipped";
  attempts: number;
  /** Why it failed or was skipped. */
  error: string | null;
}

/** The subset of a pino logger the Deliverer uses. */
export interface DeliveryLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** The outcome of one attempt, as a channel reports it to the retry loop. */
export type AttemptOutcome =
  | { ok: true; responseCode: number | null; note?: string }
  | { ok: false; retryable: boolean; responseCode: number | null; error: string; retryAfterMs?: number };
