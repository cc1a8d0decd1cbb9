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
const isoTimestampSql = (column: RawBuilder<unknown>) =>
  sql<string | null>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * JSON text built by the database by concatenation, for the pages it builds as JSON (the lists). A piece is
 * the text of one JSON value, never SQL NULL (NULL is written `null`); `jsonObject` joins pieces under their
 * keys. `json_build_object` gives the same values, but at every call it looks up each argument's type and
 * output function and turns each key into text again: an object of seven keys cost 2.6–2.9 µs against
 * 1.3 µs concatenated (PostgreSQL 15, EXPLAIN ANALYZE over 1,000 rows), and a page of 100 tunnels spent
 * most of its time in the database there. The text has no white space between tokens. Keys are literals:
 * an object without parameters can be compiled once (constant-sql.ts).
 */
declare const jsonPiece: unique symbol;
export type JsonSql = RawBuilder<string> & { readonly [jsonPiece]: true };

const piece = (text: RawBuilder<unknown>) => text as unknown as JsonSql;

/** A text value, escaped as a JSON string. */
export const jsonString = (value: RawBuilder<unknown>): JsonSql => piece(sql`coalesce(to_json((${value})::text)::text, 'null')`);

/** A value whose text needs no escaping (a uuid, a name of Tern's own enums), quoted. */
export const jsonQuoted = (value: RawBuilder<unknown>): JsonSql => piece(sql`coalesce('"' || (${value})::text || '"', 'null')`);

/** A number, a boolean, a json or jsonb value, or another piece: its text as it is. */
export const jsonAsIs = (value: RawBuilder<unknown>): JsonSql => piece(sql`coalesce((${value})::text, 'null')`);

/** A timestamptz as `toISOString` writes it (isoTimestampSql), quoted. */
export const jsonTimestamp = (value: RawBuilder<unknown>): JsonSql =>
  piece(sql`coalesce('"' || ${isoTimestampSql(value)} || '"', 'null')`);

/** An object of these keys, in this order. */
export function jsonObject(fields: Readonly<Record<string, JsonSql>>): JsonSql {
  const parts = Object.entries(fields).map(
    ([key, value], i) => sql`${sql.lit(`${i === 0 ? "{" : ","}${JSON.stringify(key)}:`)}::text || ${value}`,
  );
  if (parts.length === 0) return piece(sql`'{}'::text`);
  return piece(sql`(${sql.join(parts, sql` || `)} || '}')`);
}
