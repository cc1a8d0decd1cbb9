import { type RawBuilder, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { constantSql, sqlCompiler } from "./constant-sql.ts";

const inStatement = (fragment: RawBuilder<unknown>) => sql`select ${fragment} where id = ${"x"}`.compile(sqlCompiler);

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
