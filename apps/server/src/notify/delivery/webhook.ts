/** One webhook attempt: a signed JSON POST with a time-out, classified for the retry loop. */
import type { Notification } from "@tern/protocol";
import { parseRetryAfter } from "./retry.ts";
import type { AttemptOutcome, DeliveryEvent } from "./types.ts";
import {
  signWebhookBody,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from "./webhook-signature.ts";

export interface WebhookAttempt {
  url: string;
  secret: string;
  deliveryId: string;
  event: DeliveryEvent;
  notification: Notification | null;
  timeoutMs: number;
  userAgent: string;
  now: Date;
}

/** The exact body sent: the protocol's `WebhookPayload`, with this attempt's time. */
export function webhookBody(event: DeliveryEvent, notification: Notification | null, now: Date): string {
  return JSON.stringify({ event, notification, sentAt: now.toISOString() });
}

export async function postWebhook(a: WebhookAttempt): Promise<AttemptOutcome> {
  // Whole seconds, so the header and the signed sentAt agree exactly.
  const now = new Date(Math.floor(a.now.getTime() / 1000) * 1000);
  const body = webhookBody(a.event, a.notification, now);
  let response: Response;
  try {
    response = await fetch(a.url, {
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
