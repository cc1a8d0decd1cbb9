/** The one error body of every API error, with a machine code from one enum. */
import * as z from "zod";

export const ErrorCode = z.enum([
  "VALIDATION_FAILED",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "CONFLICT",
  "LAN_OVERLAPPING",
  "TUNNEL_OVERLAPPING",
  "TUNNEL_RANGE_EXHAUSTED",
  "VRRP_INSTALLED_ON_DEVICE",
  "RATE_LIMITED",
  "PAYLOAD_TOO_LARGE",
  "DEVICE_NOT_CONNECTED",
  "DEVICE_TIMEOUT",
  "UNSUPPORTED_PROTOCOL_VERSION",
  /** A password-reset or invitation token that is unknown, used, revoked or expired. */
  "INVALID_TOKEN",
  /** An invitation for an address that already has a user: sign in as that user to accept it. */
  "SIGN_IN_REQUIRED",
  /** The server cannot send e-mail (TERN_SMTP_URL unset, or the SMTP server refused). */
  "EMAIL_UNAVAILABLE",
  /** A registration token whose use count is spent. */
  "REGISTRATION_TOKEN_EXHAUSTED",
  /** The organization requires two-factor sign-in and the user has not enrolled (POST /api/users/me/mfa/enrol). */
  "MFA_REQUIRED",
  /** The proof given is wrong: a TOTP code (wrong, expired or replayed), a used recovery code, or the password of a 2FA change (which one is not said). */
  "MFA_PROOF_INVALID",
  /** The identity provider's sign-in failed: bad or expired state, an error answer, or an ID token that did not verify. */
  "SSO_FAILED",
  /** The identity provider does not vouch for the e-mail address (email_verified is not true). */
  "SSO_EMAIL_NOT_VERIFIED",
  /** No member has that e-mail and its domain is not one the provider may add. */
  "SSO_NOT_ALLOWED",
  /** The identity provider could not be reached or answered something unusable. */
  "SSO_PROVIDER_UNAVAILABLE",
  /** A webhook URL that points at loopback, link-local, cloud metadata or (unless allowed) private addresses. */
  "WEBHOOK_TARGET_FORBIDDEN",
  "IDENTITY_PROOF_INVALID",
  /** An unsafe request (POST, PUT, PATCH, DELETE) authenticated by the console cookie without the right X-CSRF-Token header. */
  "CSRF_FAILED",
  /** An uploaded file whose type is not accepted (e.g. a logo that is neither PNG nor SVG, or whose content does not match its type). */
  "UNSUPPORTED_MEDIA_TYPE",
  /** Self-service sign-up is turned off on this server (TERN_SIGNUP_ENABLED; the self-hosting default). */
  "SIGNUP_DISABLED",
  /** The account's plan allows no more of this (devices, organizations); the message says which limit. */
  "ACCOUNT_LIMIT",
  /** A device dump that is still being made or that failed has no archive to download. */
  "DUMP_NOT_READY",
  /** A peer `preset` that is not one of GET /api/peers/presets. */
  "PEER_PRESET_UNKNOWN",
  /** A destructive act (a device `reset`) was asked without `confirm: true`. */
  "CONFIRMATION_REQUIRED",
  "DIAGNOSTIC_TOO_MANY_DEVICES",
  /** An uploaded agent package whose bytes do not match the SHA-256 it was signed with. */
  "PACKAGE_CHECKSUM_MISMATCH",
  /** An agent package whose Ed25519 signature is wrong or made by a key not registered on the account. */
  "PACKAGE_SIGNATURE_INVALID",
  /** An agent package for a version the account already holds. */
  "PACKAGE_VERSION_EXISTS",
  /** A package a rollout still uses (cancel or finish the rollout first), or a rollout that cannot change state that way. */
  "ROLLOUT_CONFLICT",
  /** A job that cannot be deleted or retried through /api/jobs: a running agent upgrade (pause or cancel its rollout instead). */
  "JOB_NOT_CANCELLABLE",
  /** A statistics range that is empty, reversed, in the future or older than the longest-kept tier. */
  "STATISTICS_RANGE_INVALID",
  /** A statistics step that is not allowed: not a multiple of its tier's bucket, finer than what the range keeps, or too many points. */
  "STATISTICS_STEP_INVALID",
  /** The device answered a request with an error (its reason in the message), e.g. an agent too old for the method. */
  "DEVICE_REQUEST_FAILED",
  /** A request to a device stopped because its caller went away (rarely seen: the caller is gone). */
  "REQUEST_CANCELLED",
  "INTERNAL",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorDetail = z.object({
  /** Where the problem is: a dotted path into the body or the name of a query parameter. */
  path: z.string(),
  message: z.string(),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorBody = z.object({
  error: z.string(),
  code: ErrorCode,
  details: z.array(ErrorDetail).default([]),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The HTTP status that goes with each code. */
export const errorStatus: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  LAN_OVERLAPPING: 400,
  TUNNEL_OVERLAPPING: 409,
  TUNNEL_RANGE_EXHAUSTED: 409,
  VRRP_INSTALLED_ON_DEVICE: 409,
  RATE_LIMITED: 429,
  PAYLOAD_TOO_LARGE: 413,
  DEVICE_NOT_CONNECTED: 409,
  DEVICE_TIMEOUT: 504,
  UNSUPPORTED_PROTOCOL_VERSION: 400,
  INVALID_TOKEN: 400,
  SIGN_IN_REQUIRED: 401,
  EMAIL_UNAVAILABLE: 503,
  REGISTRATION_TOKEN_EXHAUSTED: 403,
  MFA_REQUIRED: 403,
  MFA_PROOF_INVALID: 403,
  SSO_FAILED: 400,
  SSO_EMAIL_NOT_VERIFIED: 403,
  SSO_NOT_ALLOWED: 403,
  SSO_PROVIDER_UNAVAILABLE: 502,
  WEBHOOK_TARGET_FORBIDDEN: 400,
  /** A device's signature (registration, websocket hello, re-key) is missing, wrong, stale or replayed. */
  IDENTITY_PROOF_INVALID: 401,
  CSRF_FAILED: 403,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SIGNUP_DISABLED: 403,
  ACCOUNT_LIMIT: 403,
  DUMP_NOT_READY: 409,
  PEER_PRESET_UNKNOWN: 400,
  CONFIRMATION_REQUIRED: 400,
  DIAGNOSTIC_TOO_MANY_DEVICES: 400,
  PACKAGE_CHECKSUM_MISMATCH: 400,
  PACKAGE_SIGNATURE_INVALID: 400,
  PACKAGE_VERSION_EXISTS: 409,
  ROLLOUT_CONFLICT: 409,
  JOB_NOT_CANCELLABLE: 409,
  STATISTICS_RANGE_INVALID: 400,
  STATISTICS_STEP_INVALID: 400,
  DEVICE_REQUEST_FAILED: 502,
  /** nginx's "client closed request". */
  REQUEST_CANCELLED: 499,
  INTERNAL: 500,
};

/** Turns zod issues into error details with dotted paths. */
export function issuesToDetails(issues: readonly { path: readonly PropertyKey[]; message: string }[]): ErrorDetail[] {
  return issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}
