/**
 * Errors of the client: the API's error body ({error, code, details}) as a
 * typed TernApiError, and TernConnectionError when no answer came at all.
 */
import type { ApiErrorCode, ErrorBody } from "./types.ts";

/** The API's codes, and UNEXPECTED_RESPONSE for an error answer without the API's body (e.g. from a proxy). */
export type TernErrorCode = ApiErrorCode | "UNEXPECTED_RESPONSE";

export class TernApiError extends Error {
  override readonly name = "TernApiError";
  constructor(
    message: string,
    /** Machine code; callers branch on this, never on the message. */
    readonly code: TernErrorCode,
    /** HTTP status of the answer. */
    readonly status: number,
    readonly details: NonNullable<ErrorBody["details"]> = [],
  ) {
    super(message);
  }
}

/** The server could not be reached (DNS, refused connection, TLS, aborted). */
export class TernConnectionError extends Error {
  override readonly name = "TernConnectionError";
  readonly code = "CONNECTION_FAILED";
  constructor(
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach ${url}: ${describeCause(options.cause)}`, options);
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message;
  }
  return String(cause);
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.error === "string" && typeof v.code === "string";
}

/** The typed error for an error answer, from its already-parsed body (JSON, text or nothing). */
export function apiErrorFrom(status: number, body: unknown): TernApiError {
  if (isErrorBody(body)) return new TernApiError(body.error, body.code, status, body.details ?? []);
  const text = typeof body === "string" && body.trim() ? `: ${body.trim().slice(0, 200)}` : "";
  return new TernApiError(`unexpected answer HTTP ${status}${text}`, "UNEXPECTED_RESPONSE", status);
}
