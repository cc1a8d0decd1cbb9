/** One webhook attempt: a signed JSON POST with a time-out, classified for the retry loop. */
import type { Notification } from "@tern/protocol";
import { type Dispatcher, fetch } from "undici";
import { parseRetryAfter } from "./retry.ts";
import type { AttemptOutcome, DeliveryEvent } from "./types.ts";
import {
  signWebhookBody,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from "./webhook-signature.ts";
import { assertLiteralAllowed, type WebhookTargetPolicy, WebhookTargetRefused } from "./webhook-target.ts";

export interface WebhookAttempt {
  url: string;
  secret: string;
  deliveryId: string;
  event: DeliveryEvent;
  notification: Notification | null;
  timeoutMs: number;
  userAgent: string;
  now: Date;
  /** Which addresses may be reached, and the dispatcher that checks them as it connects (webhook-target.ts). */
  target: { policy: WebhookTargetPolicy; dispatcher: Dispatcher };
}

/** The exact body sent: the protocol's `WebhookPayload`, with this attempt's time. */
export function webhookBody(event: DeliveryEvent, notification: Notification | null, now: Date): string {
  return JSON.stringify({ event, notification, sentAt: now.toISOString() });
}

export async function postWebhook(a: WebhookAttempt): Promise<AttemptOutcome> {
  // Whole seconds, so the header and the signed sentAt agree exactly.
  const now = new Date(Math.floor(a.now.getTime() / 1000) * 1000);
  const body = webhookBody(a.event, a.notification, now);
  let response: Awaited<ReturnType<typeof fetch>>;
  try {
    assertLiteralAllowed(new URL(a.url), a.target.policy);
    response = await fetch(a.url, {
      dispatcher: a.target.dispatcher,
      method: "POST",
      body,
      // A redirect would carry the signed body somewhere the admin did not configure.
      redirect: "manual",
      signal: AbortSignal.timeout(a.timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": a.userAgent,
        [WEBHOOK_SIGNATURE_HEADER]: signWebhookBody(a.secret, body),
        [WEBHOOK_TIMESTAMP_HEADER]: String(now.getTime() / 1000),
        [WEBHOOK_DELIVERY_HEADER]: a.deliveryId,
        [WEBHOOK_EVENT_HEADER]: a.event,
      },
    });
  } catch (err) {
    const refused = err instanceof WebhookTargetRefused ? err : (err as { cause?: unknown }).cause;
    if (refused instanceof WebhookTargetRefused)
      return { ok: false, retryable: false, responseCode: null, error: refused.message };
    return { ok: false, retryable: true, responseCode: null, error: describeFetchError(err, a.timeoutMs) };
  }
  // The answer's body is not used; release the connection.
  await response.body?.cancel().catch(() => {});
  const status = response.status;
  if (status >= 200 && status < 300) return { ok: true, responseCode: status };
  const retryable = status === 408 || status === 429 || status >= 500;
  return {
    ok: false,
    retryable,
    responseCode: status,
    error: status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`,
    retryAfterMs: retryable ? parseRetryAfter(response.headers.get("retry-after"), a.now.getTime()) : undefined,
  };
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message}: ${cause}` : e.message;
}
