/**
 * Statements kept prepared on the embedded database (db/pglite-prepared.ts), on a PGlite of its own: the same
 * answers as PGlite's own query for every type the server reads and writes, a statement parsed once, at most
 * `limit` kept, errors as PGlite reports them (a failed transaction leaks nothing), and a schema change under a
 * prepared statement recovered after one error.
 */
import { PGlite, parse, protocol } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPGlitePool } from "../../src/db/pglite-pool.ts";
import { type PGliteQuery, preparedQuery } from "../../src/db/pglite-prepared.ts";
import { testDatabaseKind } from "../support/test-database.ts";

describe.runIf(testDatabaseKind() === "pglite")("prepared statements on PGlite", () => {
  let pglite: PGlite;
  let run: PGliteQuery;
  const LIMIT = 3;

  beforeAll(async () => {
    pglite = await PGlite.create();
    run = preparedQuery(pglite, { parse, protocol }, LIMIT);
    await pglite.exec(`create table items (id int primary key, name text not null, tags text[] not null default '{}',
      doc jsonb, raw json, data bytea, at timestamptz(3), ok boolean, amount numeric, ref uuid)`);
    await pglite.exec(`insert into items (id, name) select g, 'item ' || g from generate_series(1, 50) g`);
  });
  afterAll(async () => {
    await pglite?.close();
  });

  /** This session's prepared statements: PGlite is one session. */
  const prepared = async () =>
    (await pglite.query<{ name: string; statement: string }>("select name, statement from pg_prepared_statements order by name"))
      .rows;

  it("answers as PGlite's query does, for every type, writes included", async () => {
    const at = new Date("2026-12-06T01:02:03.456Z");
    const cases: [string, unknown[]][] = [
      [
        `insert into items (id, name, tags, doc, raw, data, at, ok, amount, ref) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
          returning *`,
        [
          100,
          "hundred",
          ["a", "b,c", 'd"e'],
          JSON.stringify({ a: [1, 2], b: null }),
          JSON.stringify({ z: 1, a: 2 }),
          new Uint8Array([0, 1, 255]),
          at,
          true,
          "12.50",
          "7e000000-0000-4000-8000-000000000001",
        ],
      ],
      ["select * from items where id = $1", [100]],
      ["select id, name from items where id = any($1::int[]) order by id", [[3, 1, 2]]],
      ["select id from items where name = any($1::text[]) order by id", ["{item 4,item 5}"]],
      ["select count(*) as n, sum(id) as s from items where id <= $1", [10]],
      ["select $1::text is null as missing, $2::int as n", [null, undefined]],
      ["update items set name = name || $1 where id <= $2", ["!", 5]],
      ["update items set name = name where id > $1 returning id", [1000]],
      ["delete from items where id = $1", [100]],
    ];
    for (const [text, params] of cases) {
      // Each once through PGlite's query, inside a transaction rolled back, then through the prepared path.
      await pglite.exec("begin");
      const want = await pglite.query(text, params);
      await pglite.exec("rollback");
      const got = await run(text, params);
      expect(got, text).toEqual(want);
    }
    expect((await run<{ name: string }>("select name from items where id = $1", [5])).rows).toEqual([{ name: "item 5!" }]);
    const names = (await prepared()).filter((s) => cases.some(([text]) => text === s.statement));
    expect(names.length).toBeLessThanOrEqual(LIMIT);
  });

  /** A parameterised statement of its own text per k (`… and k = k`). */
  const byK = (k: number, tag = "") => `select name from items where id = $1 and ${k} = ${k}${tag}`;

  it("parses a statement once, and keeps at most its limit, the least recently used closed", async () => {
    for (let round = 0; round < 3; round++) expect((await run(byK(0, " -- once"), [7])).rows).toEqual([{ name: "item 7" }]);
    expect((await prepared()).filter((s) => s.statement === byK(0, " -- once"))).toHaveLength(1);
    expect((await prepared()).find((s) => s.statement === byK(0, " -- once"))!.name).toMatch(/^tern_\d+$/);
    for (let k = 1; k <= 5; k++) await run(byK(k), [7]);
    // The fifth's eviction is closed after it ran: its own execution is what sends the Close.
    await run(byK(5), [7]);
    expect((await prepared()).map((s) => s.statement)).toEqual([byK(3), byK(4), byK(5)]);
  });

  it("a failed statement is PGlite's error (code, query); a failed transaction leaks no statement", async () => {
    const error = await run("insert into items (id, name) values ($1, $2)", [1, "again"]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "23505", query: "insert into items (id, name) values ($1, $2)", params: [1, "again"] });
    await pglite.exec("begin");
    for (let k = 10; k < 10 + LIMIT + 2; k++) await run(byK(k, " -- tx"), [1]);
    await expect(run("select 1 / $1::int", [0])).rejects.toThrow(/division by zero/);
    // Aborted: PGlite answers as for any statement, and nothing new is prepared.
    await expect(run(byK(99, " -- aborted"), [1])).rejects.toMatchObject({ code: "25P02" });
    await pglite.exec("rollback");
    expect((await prepared()).filter((s) => s.statement.endsWith(" -- aborted"))).toEqual([]);
    expect((await prepared()).length).toBeLessThanOrEqual(LIMIT + 1);
    for (let k = 10; k < 10 + LIMIT + 2; k++) expect((await run(byK(k, " -- tx"), [1])).rows).toEqual([{ name: "item 1!" }]);
    expect(await prepared()).toHaveLength(LIMIT);
  });

  it("recovers when a table changes shape under a prepared statement: one error, then the new shape", async () => {
    const star = () => run<Record<string, unknown>>("select id, name, note from items where id = $1", [3]).catch(() => null);
    await pglite.exec("alter table items add column note text");
    const text = "select * from items where id = $1 and tags = '{}'";
    const before = await run<Record<string, unknown>>(text, [3]);
    expect(Object.keys(before.rows[0]!)).toContain("note");
    await pglite.exec("alter table items drop column note");
    await expect(run(text, [3])).rejects.toMatchObject({ code: "0A000" });
    const after = await run<Record<string, unknown>>(text, [3]);
    expect(Object.keys(after.rows[0]!)).not.toContain("note");
    expect(after.rows[0]).toMatchObject({ id: 3, name: "item 3!" });
    expect(await star()).toBeNull();
  });

  it("takes PGlite's query lock: its own queries running meanwhile (a LISTEN, another caller) get their own answers", async () => {
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? run<{ name: string }>("select name from items where id = $1 -- concurrent", [i + 1]).then((r) => r.rows)
        : pglite.query<{ name: string }>("select name from items where id = $1", [i + 1]).then((r) => r.rows),
    );
    const answers = await Promise.all([...calls, pglite.listen("tern_test", () => {}).then(() => "listening")]);
    expect(answers.at(-1)).toBe("listening");
    for (const [i, rows] of answers.slice(0, -1).entries())
      expect(rows).toEqual([{ name: i + 1 <= 5 ? `item ${i + 1}!` : `item ${i + 1}` }]);
  });

  it("through Kysely as the server opens it: rows and affected rows as with PGlite's query", async () => {
    const viaPrepared = new Kysely<never>({
      dialect: new PostgresDialect({ pool: createPGlitePool(run, async () => {}) }),
    });
    const viaPlain = new Kysely<never>({
      dialect: new PostgresDialect({
        pool: createPGlitePool(
          (sql, p) => pglite.query(sql, p as unknown[]),
          async () => {},
        ),
      }),
    });
    const update = (db: Kysely<never>) => sql`update items set ok = ${true} where id between ${20} and ${24}`.execute(db);
    expect((await update(viaPrepared)).numAffectedRows).toBe(5n);
    expect((await update(viaPlain)).numAffectedRows).toBe(5n);
    const read = (db: Kysely<never>) => sql`select id, ok from items where ok = ${true} order by id`.execute(db);
    expect((await read(viaPrepared)).rows).toEqual((await read(viaPlain)).rows);
    await viaPrepared.destroy();
    await viaPlain.destroy();
  });

  it("with 0 statements it is PGlite's query: nothing prepared", async () => {
    const other = await PGlite.create();
    try {
      const plain = preparedQuery(other, { parse, protocol }, 0);
      expect((await plain<{ n: number }>("select $1::int as n", [4])).rows).toEqual([{ n: 4 }]);
      expect((await other.query("select count(*)::int as n from pg_prepared_statements")).rows).toEqual([{ n: 0 }]);
    } finally {
      await other.close();
    }
  });
});
