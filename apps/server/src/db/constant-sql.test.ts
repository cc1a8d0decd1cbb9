import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { constantSql } from "./constant-sql.ts";

const compiler = new Kysely<never>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
const inStatement = (fragment: RawBuilder<unknown>) => sql`select ${fragment} where id = ${"x"}`.compile(compiler);

describe("constantSql", () => {
  it("compiles to the fragment's own text, literals and references included, beside the statement's parameters", () => {
    const fragment = sql`coalesce(${sql.ref("f.name")}, ${sql.lit("it's")}) || ${sql.lit(2)}`;
    const frozen = inStatement(constantSql(fragment));
    expect(frozen.sql).toBe(inStatement(fragment).sql);
    expect(frozen.sql).toBe(`select coalesce("f"."name", 'it''s') || 2 where id = $1`);
    expect(frozen.parameters).toEqual(["x"]);
  });

  it("refuses a fragment with parameters", () => {
    expect(() => constantSql(sql`x = ${"value"}`)).toThrow(/1 parameters/);
  });
});
