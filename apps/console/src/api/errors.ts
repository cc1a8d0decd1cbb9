/** What the console shows for a failed call: the API's own message and code. */
import { TernApiError, TernConnectionError } from "@tern/client";

export function errorText(error: unknown): string {
  if (error instanceof TernApiError) return `${error.message} (${error.code})`;
  if (error instanceof TernConnectionError) return `The server cannot be reached: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function errorCode(error: unknown): string | null {
  return error instanceof TernApiError ? error.code : null;
}
