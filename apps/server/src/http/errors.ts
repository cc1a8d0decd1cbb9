/**
 * The one error helper: every API error leaves as the protocol's ErrorBody
 * with a code from ErrorCode and the status that goes with it.
 */
import { type ErrorBody, ErrorCode, type ErrorDetail, errorStatus, issuesToDetails } from "@tern/protocol";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./env.ts";

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = [], headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): ContentfulStatusCode {
    return errorStatus[this.code] as ContentfulStatusCode;
  }
}

/** Shorthands for the errors routes and services throw most. */
export const notFound = (what: string) => new ApiError("NOT_FOUND", `${what} not found`);
export const forbidden = (message: string) => new ApiError("FORBIDDEN", message);
export const conflict = (message: string, details: ErrorDetail[] = []) => new ApiError("CONFLICT", message, details);
export const validationFailed = (message: string, details: ErrorDetail[] = []) =>
  new ApiError("VALIDATION_FAILED", message, details);
/** A validation error about one field or query parameter. */
export const invalidField = (path: string, message: string) => validationFailed(message, [{ path, message }]);

export function errorResponse(c: Context, err: ApiError): Response {
  const body: ErrorBody = { error: err.message, code: err.code, details: err.details };
  return c.json(body, err.status, err.headers);
}

type Issue = { path: readonly PropertyKey[]; message: string; params?: { errorCode?: unknown } };

/**
 * Validation hook of every route: zod issues → 400 VALIDATION_FAILED naming each path, or the
 * more precise code a schema put on an issue (`params.errorCode`, e.g. PEER_PRESET_UNKNOWN).
 */
export function validationHook(
  result: { success: true } | { success: false; error: { issues: readonly Issue[] }; target?: string },
): void {
  if (result.success) return;
  const where = result.target === "json" ? "body" : result.target === "param" ? "path parameter" : (result.target ?? "input");
  const coded = result.error.issues.map((i) => ErrorCode.safeParse(i.params?.errorCode)).find((r) => r.success);
  const details = issuesToDetails(result.error.issues);
  if (coded?.success) throw new ApiError(coded.data, details[0]?.message ?? `invalid ${where}`, details);
  throw validationFailed(`invalid ${where}`, details);
}

/** PostgreSQL errors that only bad input can cause, so they are the caller's 4xx and not our 500. */
function fromDatabaseError(err: unknown): ApiError | null {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return null;
  if (code === "23505") return conflict("a resource with the same unique value already exists");
  if (code === "23503") return validationFailed("the request refers to something that does not exist");
  // invalid text representation, numeric out of range, datetime out of range, string too long
  if (["22P02", "22003", "22008", "22001"].includes(code)) return validationFailed("a value is out of range or malformed");
  return null;
}

function fromHttpException(err: HTTPException): ApiError {
  switch (err.status) {
    case 400:
      return validationFailed(err.message || "bad request");
    case 401:
      return new ApiError("UNAUTHENTICATED", err.message || "authentication required");
    case 403:
      return forbidden(err.message || "forbidden");
    case 404:
      return new ApiError("NOT_FOUND", err.message || "not found");
    case 413:
      return new ApiError("PAYLOAD_TOO_LARGE", "request body too large");
    case 415:
      return validationFailed("the body must be JSON (Content-Type: application/json)");
    default:
      return err.status < 500 ? validationFailed(err.message || "bad request") : new ApiError("INTERNAL", "internal error");
  }
}

/** app.onError: known errors map to their code; anything else is logged and answered without details. */
export function handleError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return errorResponse(c, err);
  if (err instanceof HTTPException) return errorResponse(c, fromHttpException(err));
  const fromDb = fromDatabaseError(err);
  const log = c.get("logger");
  if (fromDb) {
    log?.info({ err }, "database refused the input");
    return errorResponse(c, fromDb);
  }
  log?.error({ err }, "unhandled error");
  const requestId = c.get("requestId");
  return errorResponse(c, new ApiError("INTERNAL", `internal error${requestId ? ` (request id ${requestId})` : ""}`));
}
