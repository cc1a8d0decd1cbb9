/**
 * A pg client that keeps the server's parameterised statements prepared on
 * its connection: a statement's text is parsed (and, with generic plans,
 * planned) once per connection instead of at every execution.
 *
 * Kysely hands the pg client text and parameters, and the text of a query
 * shape is always the same: the first execution of a text on a connection
 * prepares it under a new name, later ones execute that name. A connection
 * keeps at most `limit` statements; the least recently used is closed
 * (DEALLOCATE) once the connection is back in the pool. Kysely builds some
 * statements with a varying number of parameters (`in ($1, $2, …)`), and pg
 * alone never closes a named statement. Statements without parameters (BEGIN,
 * COMMIT, LISTEN, DDL) stay on the simple protocol, as before.
 *
 * A generic plan is fixed when it is made, with the table sizes of that
 * moment, while a custom plan reads each table's current size: a plan made
 * on a young database (an empty `device_state`, read by a sequential scan)
 * stayed 9 times slower than a custom plan for the whole fan-out bench, until
 * the next ANALYZE. So a connection starts over (DEALLOCATE ALL) once its
 * statements are `maxAgeMs` old, when it is back in the pool: plans follow
 * the tables within that time, and each statement is planned once per period
 * instead of at every execution.
 *
 * A prepared statement whose tables changed shape under it (a migration run
 * by another instance of a newer version) fails once with "cached plan must
 * not change result type"; the connection then forgets every statement it
 * prepared, so the next execution parses again.
 */
import pg from "pg";
import { StatementCache } from "./statement-cache.ts";

/** What pg's Connection keeps about the statements it parsed (not in its types). */
interface PgConnectionState {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
}

/** PostgreSQL's "feature not supported" for a prepared statement whose result type changed. */
const RESULT_TYPE_CHANGED = "0A000";

/** How long a connection keeps its statements (and their plans) before it prepares them again. */
export const PREPARED_MAX_AGE_MS = 10_000;

/**
 * A pg.Client class whose connections keep up to `limit` statements prepared, for at most `maxAgeMs` (0: none,
 * as plain pg).
 */
export function preparingClient(limit: number, maxAgeMs = PREPARED_MAX_AGE_MS): typeof PreparingClient | typeof pg.Client {
  if (limit <= 0) return pg.Client;
  return class extends PreparingClient {
    override readonly limit = limit;
    override readonly maxAgeMs = maxAgeMs;
  };
}

/** A pg client that prepares its parameterised statements (the module's comment). */
export class PreparingClient extends pg.Client {
  readonly limit: number = 100;
  readonly maxAgeMs: number = PREPARED_MAX_AGE_MS;
  /** When the statements kept now began (the first one prepared since the last start-over). */
  #since = 0;
  /** Statement name by text (created at the first query: `limit` is set by the subclass). */
  #cache: StatementCache<string> | undefined;
  #sequence = 0;
  /** Names to close on the server once the connection is back in the pool (outside any transaction). */
  #closing: string[] = [];
  #closeAll = false;

  // biome-ignore lint/suspicious/noExplicitAny: pg's query overloads (config object, Submittable, callbacks).
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config !== "string" || !Array.isArray(values) || values.length === 0 || typeof callback === "function")
      return super.query(config, values, callback);
    return (super.query({ text: config, values, name: this.#nameOf(config) }) as Promise<pg.QueryResult>).catch(
      (error: unknown) => {
        if ((error as { code?: string }).code === RESULT_TYPE_CHANGED) this.#forgetAll();
        throw error;
      },
    );
  }

  /**
   * Closes on the server the statements evicted while the connection was in use, or all of them once they are
   * `maxAgeMs` old (the module's comment). Called when the pool gets the connection back: a DEALLOCATE inside
   * a transaction that failed would fail too.
   */
  closeEvicted(): void {
    if ((this.#cache?.size ?? 0) > 0 && performance.now() - this.#since > this.maxAgeMs) this.#forgetAll();
    if (this.#closeAll) {
      this.#closeAll = false;
      this.#closing = [];
      this.#state().parsedStatements = {};
      super.query("DEALLOCATE ALL").catch(() => {});
      return;
    }
    if (this.#closing.length === 0) return;
    const state = this.#state();
    // Only statements the server confirmed (a failed parse created none), in one query: pg queues it before
    // the next user's first statement.
    const names = this.#closing.splice(0).filter((name) => state.parsedStatements[name] !== undefined);
    for (const name of names) delete state.parsedStatements[name];
    if (names.length > 0) super.query(names.map((name) => `DEALLOCATE ${name}`).join("; ")).catch(() => {});
  }

  /** The name of the statement with this text, prepared on its first use (statement-cache.ts). */
  #nameOf(text: string): string {
    this.#cache ??= new StatementCache(this.limit);
    const known = this.#cache.get(text);
    if (known !== undefined) return known;
    // Never reused on this connection, so a statement still to be closed cannot collide with a new one.
    const name = `tern_${++this.#sequence}`;
    if (this.#cache.size === 0) this.#since = performance.now();
    const evicted = this.#cache.add(text, name);
    if (evicted !== undefined) this.#closing.push(evicted);
    return name;
  }

  /** After a schema change under a prepared statement, or at the age limit: every statement parsed again, renamed. */
  #forgetAll(): void {
    this.#cache?.clear();
    this.#closeAll = true;
  }

  #state(): PgConnectionState {
    return (this as unknown as { connection: PgConnectionState }).connection;
  }
}
