/** Notifications as the admin reads them (`GET /api/notifications`) and the webhook channel's configuration. */
import { Notification, type NotificationEvent, WebhookConf } from "@tern/protocol";
import { z } from "zod";
import { type ApiClient, filterParam } from "../../../src/lab/control/index.ts";
import type { WebhookReceiver } from "./webhook-receiver.ts";

/** Notifications matching some filters (list conventions), newest first. */
export function notifications(api: ApiClient, filters: { key: string; op: string; val: unknown }[]): Promise<Notification[]> {
  return api.get("/api/notifications", z.array(Notification), { filter: filterParam(filters), limit: 1000 });
}

/** Notifications of some event types about one target (`tunnelId` or `deviceId`). */
export function notificationsAbout(
  api: ApiClient,
  target: { tunnelId?: string; deviceId?: string },
  events: NotificationEvent[],
): Promise<Notification[]> {
  return notifications(api, [
    ...Object.entries(target).map(([key, val]) => ({ key, op: "==", val })),
    { key: "eventType", op: "in", val: events },
  ]);
}

/** Points the organization's webhook at `hook` (warning and above) and checks one signed test delivery arrives. */
export async function useWebhook(api: ApiClient, hook: WebhookReceiver): Promise<void> {
  const conf = await api.put("/api/notificationsConf/webhook", WebhookConf, {
    enabled: true,
    url: hook.url,
    secret: hook.secret,
    minSeverity: "warning",
  });
  if (!conf.secretSet || conf.url !== hook.url) throw new Error(`webhook not configured: ${JSON.stringify(conf)}`);
  const test = await api.post(
    "/api/notificationsConf/webhook/test",
    z.object({ status: z.string(), error: z.string().nullish() }),
  );
  if (test.status !== "delivered") throw new Error(`webhook test delivery: ${test.status} ${test.error ?? ""}`);
}
