import { z } from "@hono/zod-openapi";
import { DefaultNotificationsConf, EmailConf, NotificationsConf, WebhookConf, WebhookConfUpdate } from "@tern/protocol";

export const NotificationsConfSchema = NotificationsConf.meta({ id: "NotificationsConf" });
export const EmailConfSchema = EmailConf.meta({ id: "EmailConf" });
export const WebhookConfSchema = WebhookConf.meta({ id: "WebhookConf" });
export const WebhookConfUpdateSchema = WebhookConfUpdate.meta({ id: "WebhookConfUpdate" });
export const DefaultNotificationsConfSchema = DefaultNotificationsConf.meta({ id: "DefaultNotificationsConf" });

export const WebhookTestResultSchema = z
  .object({
    deliveryId: z.string(),
    channel: z.literal("webhook"),
    target: z.string(),
    status: z.enum(["delivered", "failed", "skipped"]),
    attempts: z.number().int(),
    error: z.string().nullable(),
  })
  .meta({ id: "WebhookTestResult" });

export const RULES_TEXT =
  "Rules per event type (device-connection, tunnel-rtt, …): enabled, warningThreshold, criticalThreshold, thresholdUnit (fixed per event: ms, %, s; events without a threshold take none), severity, immediateEmail, resolvedAlert, sendWebHook. A PUT replaces the rules of the events it names (unset fields take the rule defaults); other events keep theirs.";
