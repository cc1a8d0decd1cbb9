/** The one error body of every API error, with a machine code from one enum. */
import { z } from "zod";

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
  "IDENTITY_PROOF_INVALID",
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
  /** A device's signature (registration, websocket hello, re-key) is missing, wrong, stale or replayed. */
  IDENTITY_PROOF_INVALID: 401,
  INTERNAL: 500,
};

/** Turns zod issues into error details with dotted paths. */
export function issuesToDetails(issues: readonly { path: readonly PropertyKey[]; message: string }[]): ErrorDetail[] {
  return issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}
