/**
 * jsonb parameters are passed as JSON text: pg turns JS arrays into PostgreSQL
 * arrays, so handing it raw values would break on the first array.
 */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** The same, keeping SQL NULL for a missing value. */
export function toJsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
