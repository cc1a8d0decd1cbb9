/**
 * Webhook signatures. The body is signed as sent: HMAC-SHA256 with the shared
 * secret over the raw bytes, in `x-tern-signature: sha256=<hex>`. The body
 * carries `sentAt`, so the signature covers the time too; `x-tern-timestamp`
 * repeats it in Unix seconds so receivers can reject stale or replayed
 * deliveries before parsing. Retries are re-signed with a fresh time and keep
 * their `x-tern-delivery` id for de-duplication.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { WEBHOOK_SIGNATURE_HEADER } from "@tern/protocol";

export { WEBHOOK_SIGNATURE_HEADER };
export const WEBHOOK_TIMESTAMP_HEADER = "x-tern-timestamp";
export const WEBHOOK_DELIVERY_HEADER = "x-tern-delivery";
export const WEBHOOK_EVENT_HEADER = "x-tern-event";

/** `sha256=<hex>` of the raw body. */
export function signWebhookBody(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export interface VerifyInput {
  secret: string;
  /** The raw body exactly as received (not re-serialised JSON). */
  body: string | Uint8Array;
  signature: string | undefined;
  timestamp: string | undefined;
  /** Largest accepted age or clock skew (default 300 s). */
  toleranceSeconds?: number;
  now?: number;
}

export type VerifyResult = { ok: true } | { ok: false; reason: string };

/** What a receiver runs: signature, freshness, and that the header time is the signed one. */
export function verifyWebhookSignature(input: VerifyInput): VerifyResult {
  if (!input.signature) return { ok: false, reason: `missing ${WEBHOOK_SIGNATURE_HEADER}` };
  const expected = Buffer.from(signWebhookBody(input.secret, input.body));
  const given = Buffer.from(input.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "signature mismatch" };
  const seconds = Number(input.timestamp);
  if (!input.timestamp || !Number.isInteger(seconds))
    return { ok: false, reason: `missing or malformed ${WEBHOOK_TIMESTAMP_HEADER}` };
  const now = input.now ?? Date.now();
  if (Math.abs(now / 1000 - seconds) > (input.toleranceSeconds ?? 300))
    return { ok: false, reason: "timestamp outside the tolerance" };
  let sentAt: number;
  try {
    sentAt = Date.parse((JSON.parse(Buffer.from(input.body).toString("utf8")) as { sentAt?: string }).sentAt ?? "");
  } catch {
    return { ok: false, reason: "body is not JSON" };
  }
  if (Math.floor(sentAt / 1000) !== seconds) return { ok: false, reason: "timestamp header does not match the signed sentAt" };
  return { ok: true };
}
