/**
 * SQL fragments without parameters (the JSON a list page is built with, db/json.ts) compiled once to their
 * text. Kysely compiles a statement by walking every node of its fragments at each execution: the tunnel's
 * JSON is some 400 nodes, about 50 µs of a list request's CPU walked again for the same text every time.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder, sql } from "kysely";

/** A Kysely that only compiles (PostgreSQL's dialect; PGlite speaks the same SQL). */
export const sqlCompiler = new Kysely<never>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** The fragment as one raw piece of SQL text; throws when it has parameters (their numbers depend on the statement). */
export function constantSql<T>(fragment: RawBuilder<T>): RawBuilder<T> {
  const { sql: text, parameters } = fragment.compile(sqlCompiler);
  if (parameters.length > 0)
    throw new Error(`constantSql: the fragment has ${parameters.length} parameters; write its values with sql.lit`);
  return sql.raw<T>(text);
}
