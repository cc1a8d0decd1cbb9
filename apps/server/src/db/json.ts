import { type RawBuilder, sql } from "kysely";

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

/**
 * A timestamptz as `Date.prototype.toISOString` writes it (UTC, milliseconds, `Z`), for pages the database
 * builds as JSON; null stays null. Tern's timestamps are `timestamptz(3)`, so nothing finer is lost.
 */
export const isoTimestampSql = (column: RawBuilder<unknown>) =>
  sql<string | null>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
