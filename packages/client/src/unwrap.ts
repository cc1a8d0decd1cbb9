/** ok(): an openapi-fetch answer as its data, or a thrown TernApiError carrying the API's error code. */
import { apiErrorFrom } from "./errors.ts";

export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw apiErrorFrom(response.status, error);
  return data as T;
}
