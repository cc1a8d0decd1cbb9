/**
 * Statements kept prepared on the embedded database, as db/prepared-client.ts
 * keeps them on each PostgreSQL connection.
 *
 * PGlite's own `query` sends every statement unnamed: Parse and Describe,
 * then Bind, Describe and Execute, each a call into its WebAssembly, and
 * PostgreSQL parses and plans the text at every execution. Here a statement
 * with parameters is parsed once under a name (Parse, Describe, Sync), and
 * each execution is one call (Bind, Execute, Sync) whose messages PGlite's
 * own parser turns into rows, with the row description kept from the
 * Describe. Measured at 10,000 devices on a PGlite data directory, one
 * statement at a time: a device read by id 0.66–0.80 → 0.22–0.43 ms, a page
 * of 100 devices 1.10–1.14 → 0.95–1.00 ms.
 *
 * PostgreSQL's default plan cache mode chooses the plans: custom plans for a
 * statement's first five executions, then the generic plan when it is not
 * dearer. A generic plan is made again when its tables are analyzed, which
 * the embedded vacuum does as they change (db/embedded-vacuum.ts).
 *
 * At most `limit` statements are kept; the least recently used is closed
 * (a Close message) once a statement has run without error, so never inside
 * a failed transaction. A statement whose tables changed shape under it
 * ("cached plan must not change result type", a migration's down and up in
 * a test), or one closed by someone else, fails once, and every statement is
 * parsed again, renamed.
 * Statements without parameters (BEGIN, COMMIT, DDL) go through PGlite's
 * `query` as before.
 */
import type { PGlite, Results } from "@electric-sql/pglite";
import { StatementCache } from "./statement-cache.ts";

/** What this module needs of PGlite's exports, given by the caller that loaded it (db/database.ts). */
export type PGliteLib = Pick<typeof import("@electric-sql/pglite"), "parse" | "protocol">;

type BackendMessage = Awaited<ReturnType<PGlite["execProtocol"]>>["messages"][number];

interface Prepared {
  name: string;
  /** The parameters' type oids, for PGlite's serializers. */
  types: number[];
  /** The statement's RowDescription; none for a statement that returns no rows. */
  description: BackendMessage | undefined;
}

/** PostgreSQL's "feature not supported" for a prepared statement whose result type changed. */
const RESULT_TYPE_CHANGED = "0A000";
/** "prepared statement does not exist": closed by someone else (DISCARD ALL, DEALLOCATE ALL). */
const NO_SUCH_STATEMENT = "26000";

export type PGliteQuery = <R>(sql: string, parameters: readonly unknown[]) => Promise<Results<R>>;

/** A query function over `pglite` that keeps up to `limit` parameterised statements prepared (0: PGlite's query). */
export function preparedQuery(pglite: PGlite, lib: PGliteLib, limit: number): PGliteQuery {
  const plain: PGliteQuery = (sql, parameters) => pglite.query(sql, parameters as unknown[]);
  if (limit <= 0) return plain;
  const serialize = lib.protocol.serialize;
  const statements = new StatementCache<Prepared>(limit);
  const closing: string[] = [];
  let sequence = 0;

  const exec = (...parts: Uint8Array[]) => {
    const message = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      message.set(part, at);
      at += part.length;
    }
    return pglite.execProtocol(message);
  };

  async function prepare(sql: string): Promise<Prepared> {
    const name = `tern_${++sequence}`;
    const { messages } = await exec(
      serialize.parse({ name, text: sql }),
      serialize.describe({ type: "S", name }),
      serialize.sync(),
    );
    const prepared = {
      name,
      types: lib.parse.parseDescribeStatementResults(messages),
      description: messages.find((m) => m.name === "rowDescription"),
    };
    const evicted = statements.add(sql, prepared);
    if (evicted) closing.push(evicted.name);
    return prepared;
  }

  async function execute<R>(sql: string, parameters: readonly unknown[]): Promise<Results<R>> {
    try {
      const prepared = statements.get(sql) ?? (await prepare(sql));
      const values = parameters.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = pglite.serializers[prepared.types[i]!];
        return serializer ? serializer(value) : String(value);
      });
      const { messages } = await exec(
        serialize.bind({ statement: prepared.name, values }),
        serialize.execute({}),
        serialize.sync(),
      );
      if (closing.length > 0)
        await exec(...closing.splice(0).map((name) => serialize.close({ type: "S", name })), serialize.sync());
      const rows = prepared.description ? [prepared.description, ...messages] : messages;
      return lib.parse.parseResults(rows, pglite.parsers)[0] as Results<R>;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === RESULT_TYPE_CHANGED || code === NO_SUCH_STATEMENT) {
        for (const { name } of statements.values()) closing.push(name);
        statements.clear();
      }
      // As PGlite's query reports a failed statement.
      throw Object.assign(error as object, { query: sql, params: parameters });
    }
  }

  // Inside PGlite's query lock, as its own query runs: execProtocol keeps each call's messages on the instance,
  // so a call of PGlite's own (a LISTEN, another caller's query) in between would take this one's answer.
  return <R>(sql: string, parameters: readonly unknown[]) =>
    parameters.length === 0 ? plain<R>(sql, parameters) : pglite.runExclusive(() => execute<R>(sql, parameters));
}
