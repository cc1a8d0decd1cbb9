export { Deliverer, type DelivererOptions } from "./deliverer.ts";
export { SmtpSender } from "./email.ts";
export { type EmailContent, escapeHtml, renderEmail } from "./email-content.ts";
export { backoffDelay, parseRetryAfter, runWithRetries } from "./retry.ts";
export type {
  AttemptOutcome,
  DeliveryAttempt,
  DeliveryChannels,
  DeliveryContext,
  DeliveryEvent,
  DeliveryLog,
  DeliveryLogger,
  DeliveryRequest,
  DeliveryResult,
  EmailChannel,
  RetryPolicy,
  SmtpSettings,
  WebhookChannel,
} from "./types.ts";
export { DEFAULT_RETRY } from "./types.ts";
export { postWebhook, webhookBody } from "./webhook.ts";
export {
  signWebhookBody,
  type VerifyInput,
  type VerifyResult,
  verifyWebhookSignature,
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from "./webhook-signature.ts";
