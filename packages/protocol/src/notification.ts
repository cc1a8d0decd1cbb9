/** Notifications (stored alerts) and their configuration: general rules, e-mail, webhook, account default. */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";

export const NotificationEvent = z.enum([
  "device-connection",
  "tunnel-connection",
  "pending-tunnel",
  "link-rtt",
  "link-drop-rate",
  "tunnel-rtt",
  "tunnel-drop-rate",
  "failed-self-healing",
  "job-failed",
  "vrrp-state-change",
  "bgp-neighbor-down",
  "interface-down",
  "missing-interface-ip",
  "device-memory-usage",
  "hard-drive-usage",
  "device-identity-conflict",
]);
export type NotificationEvent = z.infer<typeof NotificationEvent>;

/** Human titles, matching the reference's event names where it has one. */
export const NOTIFICATION_TITLES: Record<NotificationEvent, string> = {
  "device-connection": "Device connection",
  "tunnel-connection": "Tunnel connection",
  "pending-tunnel": "Pending tunnel",
  "link-rtt": "Link round trip time",
  "link-drop-rate": "Link default drop rate",
  "tunnel-rtt": "Tunnel round trip time",
  "tunnel-drop-rate": "Tunnel default drop rate",
  "failed-self-healing": "Failed self-healing",
  "job-failed": "Job failed",
  "vrrp-state-change": "VRRP state change",
  "bgp-neighbor-down": "BGP neighbor down",
  "interface-down": "Link status",
  "missing-interface-ip": "Missing interface ip",
  "device-memory-usage": "Device memory usage",
  "hard-drive-usage": "Hard drive usage",
  "device-identity-conflict": "Device identity conflict",
};

export const Severity = z.enum(["info", "warning", "critical"]);
export type Severity = z.infer<typeof Severity>;

export const Notification = z.object({
  id: Id,
  org: Id,
  /** The device the notification is about (the spec's device ID). */
  deviceId: Id.nullable(),
  eventType: NotificationEvent,
  title: z.string(),
  details: z.string(),
  severity: Severity,
  targets: z.object({
    deviceId: Id.nullable(),
    tunnelId: Id.nullable(),
    interfaceId: z.string().nullable(),
    vrrpGroupId: Id.nullable(),
    /** The BGP neighbor's address (bgp-neighbor-down). */
    bgpNeighbor: z.string().nullable().default(null),
  }),
  /** How many times the same condition was seen while open. */
  count: z.number().int().min(1),
  resolved: z.boolean(),
  status: z.enum(["read", "unread"]),
  createdAt: Timestamp,
  lastSeenAt: Timestamp,
  resolvedAt: Timestamp.nullable(),
});
export type Notification = z.infer<typeof Notification>;

/** `PUT /notifications`: mark read/unread (and optionally resolved) by ids or by filter. */
export const NotificationsUpdate = z
  .object({
    ids: z.array(Id).max(10000).optional(),
    status: z.enum(["read", "unread"]).optional(),
    resolved: z.literal(true).optional(),
  })
  .refine((b) => b.status !== undefined || b.resolved !== undefined, { message: "give status or resolved", path: ["status"] });

/** One rule of the general configuration. */
export const NotificationRule = z
  .object({
    enabled: z.boolean().default(true),
    warningThreshold: z.number().min(0).nullable().default(null),
    criticalThreshold: z.number().min(0).nullable().default(null),
    thresholdUnit: z.enum(["ms", "%", "s", ""]).default(""),
    severity: Severity.default("warning"),
    immediateEmail: z.boolean().default(false),
    resolvedAlert: z.boolean().default(true),
    sendWebHook: z.boolean().default(false),
  })
  .refine((r) => r.warningThreshold === null || r.criticalThreshold === null || r.warningThreshold <= r.criticalThreshold, {
    message: "warningThreshold must not exceed criticalThreshold",
    path: ["warningThreshold"],
  });
export type NotificationRule = z.infer<typeof NotificationRule>;

export const NotificationRules = z.partialRecord(NotificationEvent, NotificationRule);
export type NotificationRules = z.infer<typeof NotificationRules>;

/** The reference's defaults: RTT 300/600 ms, drop rate 5/20 %, usage 85/95 %. */
export const DEFAULT_NOTIFICATION_RULES: Record<NotificationEvent, z.input<typeof NotificationRule>> = {
  "device-connection": {
    severity: "critical",
    immediateEmail: true,
    sendWebHook: true,
    thresholdUnit: "s",
    warningThreshold: 60,
  },
  "tunnel-connection": { severity: "critical", sendWebHook: true },
  "pending-tunnel": { severity: "warning" },
  "link-rtt": { warningThreshold: 300, criticalThreshold: 600, thresholdUnit: "ms" },
  "link-drop-rate": { warningThreshold: 5, criticalThreshold: 20, thresholdUnit: "%" },
  "tunnel-rtt": { warningThreshold: 300, criticalThreshold: 600, thresholdUnit: "ms", sendWebHook: true },
  "tunnel-drop-rate": { warningThreshold: 5, criticalThreshold: 20, thresholdUnit: "%", sendWebHook: true },
  "failed-self-healing": { severity: "critical", immediateEmail: true },
  "job-failed": { severity: "warning" },
  "vrrp-state-change": { severity: "warning", sendWebHook: true },
  "bgp-neighbor-down": { severity: "warning" },
  "interface-down": { severity: "warning" },
  "missing-interface-ip": { severity: "warning" },
  "device-memory-usage": { warningThreshold: 85, criticalThreshold: 95, thresholdUnit: "%" },
  "hard-drive-usage": { warningThreshold: 85, criticalThreshold: 95, thresholdUnit: "%" },
  /** A registration presented an approved device's machine id without its key (a takeover attempt, or a new disk). */
  "device-identity-conflict": { severity: "critical", immediateEmail: true, sendWebHook: true },
};

/** `GET/PUT /notificationsConf`: the organization's rules. */
export const NotificationsConf = z.object({ rules: NotificationRules });
export type NotificationsConf = z.infer<typeof NotificationsConf>;

/** `GET/PUT /notificationsConf/email`. */
export const EmailConf = z.object({
  enabled: z.boolean().default(false),
  recipients: z.array(z.email()).max(50).default([]),
  /** Lowest severity that is e-mailed. */
  minSeverity: Severity.default("warning"),
});
export type EmailConf = z.infer<typeof EmailConf>;

/** `PUT /notificationsConf/webhook` body: `secret` may be omitted to keep the current one. */
export const WebhookConfUpdate = z.object({
  enabled: z.boolean().default(false),
  url: z
    .url({ protocol: /^https?$/ })
    .or(z.literal(""))
    .default(""),
  secret: z.string().min(16, "secret must be at least 16 characters").max(200).optional(),
  minSeverity: Severity.default("warning"),
});
/** `GET /notificationsConf/webhook`: the secret is never returned. */
export const WebhookConf = WebhookConfUpdate.omit({ secret: true }).extend({ secretSet: z.boolean() });
export type WebhookConf = z.infer<typeof WebhookConf>;

/** `GET/PUT /notificationsConf/default`: the account's default, applied to new organizations. */
export const DefaultNotificationsConf = z.object({ rules: NotificationRules, email: EmailConf });

/** The JSON body of a webhook delivery; signed with HMAC-SHA256 in `x-tern-signature`. */
export const WebhookPayload = z.object({
  event: z.enum(["notification.raised", "notification.resolved", "test"]),
  notification: Notification.nullable(),
  sentAt: Timestamp,
});
export const WEBHOOK_SIGNATURE_HEADER = "x-tern-signature";
