/**
 * The pg client that keeps statements prepared (db/prepared-client.ts), on PostgreSQL (PGlite has no pg client):
 * the same answers as plain pg, statements parsed once per connection, at most `limit` kept, evicted ones closed
 * on the server outside transactions, and a schema change under a prepared statement recovered after one error.
 */
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresDb } from "../../src/db/database.ts";
import { PreparingClient, preparingClient } from "../../src/db/prepared-client.ts";
import type { Database } from "../../src/db/schema.ts";
import { createPostgresDatabase, testDatabaseKind } from "../support/test-database.ts";

describe.runIf(testDatabaseKind() === "postgres")("prepared statements on PostgreSQL", () => {
  let created: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let db: Kysely<Database>;
  const LIMIT = 3;

  beforeAll(async () => {
    created = await createPostgresDatabase("tern_prepared");
    // One connection, as the server's pool makes them (TERN_DB_PREPARED_STATEMENTS = LIMIT).
    db = postgresDb(created.url, 1, undefined, LIMIT);
    await sql`create table items (id int primary key, name text not null)`.execute(db);
    await sql`insert into items select g, 'item ' || g from generate_series(1, 50) g`.execute(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await created?.drop();
  });

  /** The server's own view of this session's prepared statements (one connection: always the same session). */
  const serverStatements = async () =>
    (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(db))
      .rows;

  it("answers as plain pg does, and parses a statement once per connection", async () => {
    const plain = new pg.Client({ connectionString: created.url });
    await plain.connect();
    try {
      const text = "select id, name from items where id <= $1 and name like $2 order by id";
      for (const [limit, pattern] of [
        [10, "item 1%"],
        [50, "%5"],
        [0, "%"],
      ] as const) {
        const want = (await plain.query(text, [limit, pattern])).rows;
        expect(want.length).toBe(limit === 10 ? 2 : limit === 50 ? 5 : 0);
        const got = await sql<{
          id: number;
          name: string;
        }>`select id, name from items where id <= ${limit} and name like ${pattern} order by id`.execute(db);
        expect(got.rows).toEqual(want);
      }
      const prepared = (await serverStatements()).filter((s) => s.statement === text);
      expect(prepared).toHaveLength(1);
      expect(prepared[0]!.name).toMatch(/^tern_\d+$/);
      // Planned once, generically: the plan does not follow the values.
      expect((await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(db)).rows).toEqual([
        { mode: "force_generic_plan" },
      ]);
    } finally {
      await plain.end();
    }
  });

  it("with 0 statements the pool is plain pg: nothing prepared, PostgreSQL's own plan choice", async () => {
    const plainDb = postgresDb(created.url, 1, undefined, 0);
    try {
      const rows = await sql<{ mode: string; prepared: number }>`select current_setting('plan_cache_mode') as mode,
        (select count(*)::int from pg_prepared_statements where ${1} = 1) as prepared`.execute(plainDb);
      expect(rows.rows).toEqual([{ mode: "auto", prepared: 0 }]);
    } finally {
      await plainDb.destroy();
    }
  });

  /** A parameterised statement of its own text per k (`… and k = k`). */
  const byK = (k: number, id: number, tag = "") =>
    sql<{ name: string }>`select name from items where id = ${id} and ${sql.raw(`${k} = ${k}`)}${sql.raw(tag)}`;

  it("keeps at most its limit, closing the least recently used once the connection is back in the pool", async () => {
    await db.transaction().execute(async (trx) => {
      for (let k = 0; k < 6; k++) expect((await byK(k, 7).execute(trx)).rows).toEqual([{ name: "item 7" }]);
    });
    // The DEALLOCATEs queued at the release ran before this query on the one connection.
    const left = (await serverStatements()).map((s) => s.statement);
    expect(left).toHaveLength(LIMIT);
    expect(left.filter((s) => / and [345] = [345]$/.test(s))).toHaveLength(LIMIT);
  });

  it("keeps a statement used again over those used less recently, whatever their order of first use", async () => {
    await db.transaction().execute(async (trx) => {
      // Three texts of the same length (kept together), the first used again, then a fourth, then a fifth.
      for (const k of [10, 11, 12, 10, 13, 14]) expect((await byK(k, 7).execute(trx)).rows).toEqual([{ name: "item 7" }]);
    });
    const left = (await serverStatements()).map((s) => s.statement);
    expect(left).toHaveLength(LIMIT);
    expect(left.filter((s) => / and (10 = 10|13 = 13|14 = 14)$/.test(s))).toHaveLength(LIMIT);
  });

  it("closes evicted statements only outside transactions: none leaks when a transaction fails", async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        for (let k = 10; k < 10 + LIMIT + 2; k++) await byK(k, 1, " -- tx").execute(trx);
        await sql`select 1 / ${0}::int`.execute(trx);
      }),
    ).rejects.toThrow(/division by zero/);
    // Closed inside the failed transaction, the DEALLOCATEs would have failed and the statements stayed.
    expect(await serverStatements()).toHaveLength(LIMIT);
    // The connection still answers every text, the evicted ones parsed again.
    for (let k = 10; k < 10 + LIMIT + 2; k++) expect((await byK(k, 1, " -- tx").execute(db)).rows).toEqual([{ name: "item 1" }]);
    expect(await serverStatements()).toHaveLength(LIMIT);
  });

  it("starts over once its statements are older than the age limit: the next plans see the tables as they are", async () => {
    const pool = new pg.Pool({ connectionString: created.url, max: 1, Client: preparingClient(10, 200) });
    pool.on("release", (_e, client) => {
      if (client instanceof PreparingClient) client.closeEvicted();
    });
    const names = async () => {
      const client = await pool.connect();
      try {
        await client.query("select id from items where id = $1 -- aged", [1]);
        return (await client.query<{ name: string }>("select name from pg_prepared_statements")).rows.map((r) => r.name);
      } finally {
        client.release();
      }
    };
    try {
      const first = await names();
      expect(first).toHaveLength(1);
      expect(await names()).toEqual(first);
      await new Promise((r) => setTimeout(r, 250));
      // This use is past the limit: its release closes every statement, the next use prepares anew.
      expect(await names()).toEqual(first);
      const next = await names();
      expect(next).toHaveLength(1);
      expect(next).not.toEqual(first);
    } finally {
      await pool.end();
    }
  });

  it("recovers when a table changes shape under a prepared statement: one error, then the new shape", async () => {
    const star = () => sql<Record<string, unknown>>`select * from items where id = ${3}`.execute(db);
    expect((await star()).rows).toEqual([{ id: 3, name: "item 3" }]);
    // Another instance's migration, on another connection.
    const other = new pg.Client({ connectionString: created.url });
    await other.connect();
    await other.query("alter table items add column note text");
    await other.end();
    await expect(star()).rejects.toMatchObject({ code: "0A000" });
    expect((await star()).rows).toEqual([{ id: 3, name: "item 3", note: null }]);
    expect((await star()).rows).toEqual([{ id: 3, name: "item 3", note: null }]);
  });
});
