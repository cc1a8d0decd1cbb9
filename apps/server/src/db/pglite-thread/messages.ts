/**
 * What the server's thread and the embedded database's thread say to each
 * other (client.ts and thread.ts). Everything here goes through
 * postMessage's structured clone, so errors travel as plain fields.
 */

/** What the database's thread is started with (the worker's workerData). */
export interface ThreadOptions {
  /** The data directory; none: in memory. */
  dataDir?: string;
  /** A dump to start from (PGlite's dumpDataDir), as bytes. */
  loadDataDir?: Uint8Array<ArrayBuffer>;
  /** PostgreSQL options after PGlite's defaults (`-c name=value` pairs). */
  startParams: string[];
  /** Statements kept prepared (db/pglite-prepared.ts); 0: none. */
  preparedStatements: number;
}

export type Request =
  | { id: number; op: "query"; sql: string; params: readonly unknown[] }
  | { id: number; op: "listen"; channel: string }
  | { id: number; op: "unlisten"; subscription: number }
  | { id: number; op: "dump" }
  | { id: number; op: "close" };

/** A query's answer: PGlite's Results without the fields' descriptions, which the pool does not read. */
export interface QueryAnswer {
  rows: unknown[];
  /** INSERT, UPDATE … (Kysely counts affected rows only for those). */
  command?: string | undefined;
  affectedRows?: number | undefined;
  rowCount?: number | undefined;
}

/** An error as fields: its name, message and stack, and the database's own (code, detail, constraint …). */
export type ErrorFields = { name: string; message: string; stack?: string } & Record<string, unknown>;

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: ErrorFields }
  /** The database is open (the first message), or could not be opened. */
  | { ready: true }
  | { ready: false; error: ErrorFields }
  /** A NOTIFY heard on a subscription (a "listen" request's value). */
  | { subscription: number; payload: string };

/** An error's fields, for postMessage (which would keep only an Error's message and stack). */
export function errorFields(error: unknown): ErrorFields {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const fields: ErrorFields = { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  for (const [key, value] of Object.entries(error))
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) fields[key] = value;
  return fields;
}

/** The error again, on the other side: an Error with the same message and the database's fields. */
export function errorFrom(fields: ErrorFields): Error {
  const { name, message, stack: _stack, ...rest } = fields;
  return Object.assign(new Error(message), rest, { name });
}
