/**
 * The notification tests' world: the real server with a real SMTP server
 * (smtp-server) and a webhook receiver that verifies every signature, the
 * organization's notification settings set through the API, and a way to
 * send one status and wait until the engine has done everything it caused.
 */
import type { Notification, NotificationEvent } from "@tern/protocol";
import type { SimDevice } from "@tern/test-harness/src/simulator/index.ts";
import { SmtpReceiver } from "../delivery/smtp-receiver.ts";
import { WebhookReceiver } from "../delivery/webhook-receiver.ts";
import { createGatewayHarness, type GatewayHarness, waitUntil } from "../support/gateway.ts";
import type { AdminClient } from "../support/onboarding.ts";

export const WEBHOOK_SECRET = "a webhook secret of the tests";
export const RECIPIENT = "noc@example.com";

export interface NotifyWorld {
  g: GatewayHarness;
  api: AdminClient;
  smtp: SmtpReceiver;
  webhook: WebhookReceiver;
  /** Sends one status of `sim` now and waits until the engine recorded what it caused (deliveries may still run). */
  settle(sim: SimDevice): Promise<void>;
  /** The same for a status sent by `send` on behalf of `deviceId` (a raw link). */
  settleWith(deviceId: string, send: () => void): Promise<void>;
  /** Waits for the engine's queued raises, resolves and deliveries. */
  idle(): Promise<void>;
  notifications(filter: { eventType?: NotificationEvent; deviceId?: string; resolved?: boolean }): Promise<Notification[]>;
  close(): Promise<void>;
}

export async function createNotifyWorld(env: Record<string, string> = {}): Promise<NotifyWorld> {
  const smtp = new SmtpReceiver();
  const smtpPort = await smtp.start();
  const webhook = new WebhookReceiver(WEBHOOK_SECRET);
  const webhookUrl = await webhook.start();
  const g = await createGatewayHarness({
    TERN_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    TERN_SMTP_FROM: "Tern tests <tern@example.com>",
    TERN_NOTIFY_CONFIRM_REPORTS: "2",
    TERN_NOTIFY_RETRY_BASE_MS: "20",
    TERN_NOTIFY_RETRY_ATTEMPTS: "3",
    // The webhook receiver is on this host's loopback, which webhooks may not reach by default.
    TERN_WEBHOOK_ALLOWED_NETWORKS: "127.0.0.1",
    ...env,
  });
  const api = await g.api();
  const put = async (path: string, body: unknown) => {
    const res = await api.call("PUT", path, { body });
    if (res.status !== 200) throw new Error(`PUT ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  await put("/api/notificationsConf/email", { enabled: true, recipients: [RECIPIENT], minSeverity: "warning" });
  await put("/api/notificationsConf/webhook", { enabled: true, url: webhookUrl, secret: WEBHOOK_SECRET, minSeverity: "warning" });

  const statuses = new Map<string, number>();
  const listen = () => g.server.gateway.events.on("status", (e) => statuses.set(e.deviceId, (statuses.get(e.deviceId) ?? 0) + 1));
  listen();
  const idle = () => g.server.notifications.idle();
  const settleWith = async (id: string, send: () => void) => {
    const before = statuses.get(id) ?? 0;
    send();
    await waitUntil(
      () => statuses.get(id) ?? 0,
      (n) => n > before,
      10_000,
      "the status to arrive",
    );
    // The engine's own work (raises, resolves), not the deliveries it handed on.
    await g.server.notifications.work.idle();
  };
  return {
    g,
    api,
    smtp,
    webhook,
    idle,
    async settle(sim) {
      await settleWith(sim.deviceId!, () => {
        if (!sim.sendStatus()) throw new Error(`device ${sim.position} could not send a status`);
      });
    },
    settleWith,
    async notifications(filter) {
      const f = Object.entries(filter).map(([key, val]) => ({ key, op: "==", val }));
      const res = await api.call<Notification[]>("GET", "/api/notifications", { query: { filter: JSON.stringify(f) } });
      if (res.status !== 200) throw new Error(`GET /api/notifications: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    async close() {
      await g.close();
      await smtp.stop();
      await webhook.stop();
    },
  };
}
